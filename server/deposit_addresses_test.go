package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	zxqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/wallet"
)

// Tokens of the watched chains in these tests: USDT's contracts on BSC
// and TRON. The RPC URLs lead nowhere; nothing here reads a chain.
const (
	bscUSDT  = "0x55d398326f99059fF775485246999027B3197955"
	tronUSDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
)

// withWallets sets both keys and watches BSC and TRON.
func withWallets(c *server.Config) {
	c.WalletEVMXPub, c.WalletTronXPub = evmXPub, tronXPub
	c.Chains = []string{wallet.BSC, wallet.TRON}
	c.ChainSettings.BSC = server.ChainConfig{RPCURL: "http://127.0.0.1:1", Token: bscUSDT, Decimals: 18, Confirmations: 15, KopecksPerToken: 9000}
	c.ChainSettings.Tron = server.ChainConfig{RPCURL: "http://127.0.0.1:1", Token: tronUSDT, Decimals: 6, Confirmations: 20, KopecksPerToken: 9100}
}

// derive is user id's address of family from xpub, as package wallet
// derives it.
func derive(t *testing.T, family wallet.Family, xpub string, id int64) string {
	t.Helper()
	d, err := wallet.NewDeriver(family, xpub)
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Address(id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// profileAddresses are the four addresses of the caller's profile.
func profileAddresses(t *testing.T, h *harness, token string) [4]string {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		User struct {
			Eth     string `json:"ethereum_address"`
			BSC     string `json:"bsc_address"`
			Polygon string `json:"polygon_address"`
			Tron    string `json:"tron_address"`
		} `json:"user"`
	}
	r.decode(t, &out)
	p := out.User
	return [4]string{p.Eth, p.BSC, p.Polygon, p.Tron}
}

type apiDepositAddress struct {
	Chain           string `json:"chain"`
	Address         string `json:"address"`
	Token           string `json:"token"`
	Decimals        int    `json:"decimals"`
	Confirmations   int    `json:"confirmations"`
	KopecksPerToken int64  `json:"kopecks_per_token"`
	QRSVG           string `json:"qr_svg"`
}

func depositAddresses(t *testing.T, h *harness, token string) []apiDepositAddress {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/deposit-addresses", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Addresses []apiDepositAddress `json:"addresses"`
	}
	r.decode(t, &out)
	if out.Addresses == nil {
		t.Fatalf("addresses is not a list: %s", r)
	}
	return out.Addresses
}

// run is one dark run of the QR code's SVG path: "M<x> <y>h<n>v1h-<n>z".
var run = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

// readQR draws the SVG of a qr_svg data URL (its viewBox and path of
// runs) as an image and decodes it with an independent QR reader.
func readQR(t *testing.T, dataURL string) string {
	t.Helper()
	b64, ok := strings.CutPrefix(dataURL, "data:image/svg+xml;base64,")
	if !ok {
		t.Fatalf("qr_svg is no base64 SVG data URL: %.60s", dataURL)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(raw)
	var n int
	if _, err := fmt.Sscanf(svg[strings.Index(svg, "viewBox="):], `viewBox="0 0 %d`, &n); err != nil || n < 21 {
		t.Fatalf("no viewBox in %.120s: %v", svg, err)
	}
	const scale = 4
	img := image.NewGray(image.Rect(0, 0, n*scale, n*scale))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	runs := run.FindAllStringSubmatch(svg, -1)
	if len(runs) == 0 {
		t.Fatalf("no modules in %.200s", svg)
	}
	for _, m := range runs {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		w, _ := strconv.Atoi(m[3])
		for px := x * scale; px < (x+w)*scale; px++ {
			for py := y * scale; py < (y+1)*scale; py++ {
				img.SetGray(px, py, color.Gray{})
			}
		}
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := zxqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("the QR code does not decode: %v", err)
	}
	return res.GetText()
}

func TestDepositAddresses(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			t.Run("a registered user's profile shows the addresses derived from the keys", func(t *testing.T) {
				h := newHarness(t, sc.new(t), withConfig(withWallets))
				ann, bob := h.register(t, "ann"), h.register(t, "bob")
				for _, u := range []apiUser{ann, bob} {
					evm, tron := derive(t, wallet.EVM, evmXPub, u.id), derive(t, wallet.Tron, tronXPub, u.id)
					if got, want := profileAddresses(t, h, u.token), [4]string{evm, evm, evm, tron}; got != want {
						t.Errorf("user %d's addresses = %q, want %q", u.id, got, want)
					}
				}
				if a, b := profileAddresses(t, h, ann.token), profileAddresses(t, h, bob.token); a[0] == b[0] || a[3] == b[3] {
					t.Errorf("two users share an address: %q and %q", a, b)
				}
			})

			t.Run("the deposit addresses are the watched chains', in order, each with a QR code of it", func(t *testing.T) {
				h := newHarness(t, sc.new(t), withConfig(withWallets))
				ann := h.register(t, "ann")
				got := depositAddresses(t, h, ann.token)
				evm, tron := derive(t, wallet.EVM, evmXPub, ann.id), derive(t, wallet.Tron, tronXPub, ann.id)
				want := []apiDepositAddress{
					{Chain: "bsc", Address: evm, Token: bscUSDT, Decimals: 18, Confirmations: 15, KopecksPerToken: 9000},
					{Chain: "tron", Address: tron, Token: tronUSDT, Decimals: 6, Confirmations: 20, KopecksPerToken: 9100},
				}
				if len(got) != len(want) {
					t.Fatalf("got %d addresses, want %d: %+v", len(got), len(want), got)
				}
				for i := range want {
					qr := got[i].QRSVG
					got[i].QRSVG = ""
					if got[i] != want[i] {
						t.Errorf("address %d = %+v, want %+v", i, got[i], want[i])
					}
					if text := readQR(t, qr); text != want[i].Address {
						t.Errorf("%s's QR code reads %q, want %q", want[i].Chain, text, want[i].Address)
					}
				}
			})

			t.Run("without keys the addresses are empty and nothing is listed", func(t *testing.T) {
				h := newHarness(t, sc.new(t))
				ann := h.register(t, "ann")
				if got := profileAddresses(t, h, ann.token); got != [4]string{} {
					t.Errorf("addresses = %q, want all empty", got)
				}
				if got := depositAddresses(t, h, ann.token); len(got) != 0 {
					t.Errorf("deposit addresses = %+v, want none", got)
				}
			})

			t.Run("a key without a watched chain gives profile addresses and lists nothing", func(t *testing.T) {
				h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.WalletTronXPub = tronXPub }))
				ann := h.register(t, "ann")
				if got, want := profileAddresses(t, h, ann.token), [4]string{"", "", "", derive(t, wallet.Tron, tronXPub, ann.id)}; got != want {
					t.Errorf("addresses = %q, want %q", got, want)
				}
				if got := depositAddresses(t, h, ann.token); len(got) != 0 {
					t.Errorf("deposit addresses = %+v, want none (nothing watched)", got)
				}
			})

			t.Run("the backfill gives users made before the keys theirs, and a changed key keeps the old address in the book", func(t *testing.T) {
				store := sc.new(t)
				cfg := testConfig(store)
				h, app := startServer(t, cfg)
				ann, bob := h.register(t, "ann"), h.register(t, "bob")
				if got := profileAddresses(t, h, ann.token); got != [4]string{} {
					t.Fatalf("addresses before the keys = %q", got)
				}
				stop(t, app)

				withWallets(&cfg)
				h, app = startServer(t, cfg)
				for _, u := range []apiUser{ann, bob} {
					evm, tron := derive(t, wallet.EVM, evmXPub, u.id), derive(t, wallet.Tron, tronXPub, u.id)
					waitAddresses(t, h, u.token, [4]string{evm, evm, evm, tron})
				}
				stop(t, app)

				// The operator moves the EVM addresses to another account
				// of their wallet (account 0 of TRON's path serves here).
				cfg.WalletEVMXPub = tronXPub
				h, app = startServer(t, cfg)
				oldEVM := derive(t, wallet.EVM, evmXPub, ann.id)
				newEVM, tron := derive(t, wallet.EVM, tronXPub, ann.id), derive(t, wallet.Tron, tronXPub, ann.id)
				waitAddresses(t, h, ann.token, [4]string{newEVM, newEVM, newEVM, tron})
				book := store.(account.AddressBook)
				owners, err := book.AddressOwners(context.Background(), wallet.EVM, []string{oldEVM, newEVM})
				if err != nil {
					t.Fatal(err)
				}
				if owners[oldEVM] != ann.id || owners[newEVM] != ann.id {
					t.Errorf("owners = %v, want the old and the new address both ann's (%d)", owners, ann.id)
				}
				stop(t, app)

				// Without keys the profile is cleared; the book keeps them.
				cfg.WalletEVMXPub, cfg.WalletTronXPub, cfg.Chains = "", "", nil
				h, _ = startServer(t, cfg)
				waitAddresses(t, h, ann.token, [4]string{})
				if owners, err := book.AddressOwners(context.Background(), wallet.Tron, []string{tron}); err != nil || owners[tron] != ann.id {
					t.Errorf("TRON owners = %v, %v; want the cleared address still ann's", owners, err)
				}
			})
		})
	}
}

func stop(t *testing.T, app interface{ Stop(context.Context) error }) {
	t.Helper()
	if err := app.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// waitAddresses waits for the backfill, which runs in the background, to
// bring the caller's profile addresses to want.
func waitAddresses(t *testing.T, h *harness, token string, want [4]string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := profileAddresses(t, h, token)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("addresses = %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
