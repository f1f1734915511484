package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/wallet"
)

// Deposit addresses (docs/deposit-addresses.md): each user's addresses
// derived from the operator's extended public keys, given at registration
// (account.Service.Addresses), brought to the current keys at start
// (runAddressBackfill), and shown with a QR code each at GET
// /users/me/deposit-addresses.

// newAddresser returns the addresser of the configured keys (none: one
// that gives nothing). A store that keeps no address book cannot have
// keys: the server would show addresses whose deposits it could not
// credit.
func newAddresser(store account.Store, cfg Config) (*account.Addresser, error) {
	var keys [2]*wallet.Deriver
	for i, k := range []struct {
		family wallet.Family
		xpub   string
	}{{wallet.EVM, cfg.WalletEVMXPub}, {wallet.Tron, cfg.WalletTronXPub}} {
		if k.xpub == "" {
			continue
		}
		d, err := wallet.NewDeriver(k.family, k.xpub)
		if err != nil {
			return nil, err // Config.Validate refused it already
		}
		keys[i] = d
	}
	book, ok := store.(account.AddressBook)
	if !ok {
		if keys[0] != nil || keys[1] != nil {
			return nil, errors.New("server: the store keeps no address book (account.AddressBook), so it cannot have deposit addresses: unset PREDICTKIT_WALLET_EVM_XPUB and PREDICTKIT_WALLET_TRON_XPUB")
		}
		return account.NewAddresser(nil, nil, nil), nil
	}
	return account.NewAddresser(book, keys[0], keys[1]), nil
}

// runAddressBackfill brings every user's addresses to the current keys
// once the server has started, in the background (a large user base
// takes a while and the server serves meanwhile; a user who asks for
// their addresses before it reaches them is given them then). Every
// instance runs it: it is idempotent, so concurrent runs write the same
// addresses, and once done a run finds nothing to do.
func runAddressBackfill(lc fx.Lifecycle, addresses *account.Addresser, log *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Go(func() {
				start := time.Now()
				n, err := addresses.Backfill(ctx, account.DefaultBackfillBatch)
				switch {
				case err != nil && ctx.Err() == nil:
					log.Error("deposit addresses: backfill stopped; it runs again at the next start", "err", err, "changed", n)
				case n > 0:
					log.Info("deposit addresses: users' addresses brought to the current keys", "changed", n, "took", time.Since(start).Round(time.Millisecond))
				}
			})
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// addressHandlers serves the deposit addresses.
type addressHandlers struct {
	addresses *account.Addresser
	auth      *Auth
	cfg       Config
}

func addressRoutes(addresses *account.Addresser, auth *Auth, cfg Config) RoutesOut {
	h := &addressHandlers{addresses: addresses, auth: auth, cfg: cfg}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/users/me/deposit-addresses", Errors: errsDepositAddresses, Handler: h.handleDepositAddresses},
	}}
}

// depositAddressJSON is where to send one watched chain's token.
type depositAddressJSON struct {
	Chain           string `json:"chain"`
	Address         string `json:"address"`
	Token           string `json:"token"`
	Decimals        int    `json:"decimals"`
	Confirmations   int    `json:"confirmations"`
	KopecksPerToken int64  `json:"kopecks_per_token"`
	QRSVG           string `json:"qr_svg"`
}

// GET /users/me/deposit-addresses: the caller's address on each watched
// chain, in the order of Config.Chains, with the token, its rate and the
// confirmations a deposit waits for. A chain where the caller has no
// address (a partner's sub-account, an id past wallet.MaxIndex) is left
// out; nothing watched: an empty list. Checks run 401.
var errsDepositAddresses = table("internal_error", unauthorized)

func (h *addressHandlers) handleDepositAddresses(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	if h.lacksAddress(u) {
		// Registered while giving addresses failed, or before the keys
		// were set and not reached by the backfill yet.
		fresh := *u
		if err := h.addresses.Assign(c.UserContext(), &fresh); err != nil {
			return err
		}
		u = &fresh
	}
	out := []depositAddressJSON{}
	for _, chain := range h.cfg.Chains {
		addr := chainAddress(u, chain)
		cc := h.cfg.ChainSettings.Of(chain)
		if addr == "" || cc == nil {
			continue
		}
		qr, err := qrSVG(addr)
		if err != nil {
			return err
		}
		out = append(out, depositAddressJSON{Chain: chain, Address: addr, Token: cc.Token, Decimals: cc.Decimals,
			Confirmations: cc.Confirmations, KopecksPerToken: cc.KopecksPerToken, QRSVG: qr})
	}
	return c.JSON(fiber.Map{"addresses": out})
}

// lacksAddress reports whether u has no address on a watched chain that
// the current keys would give it.
func (h *addressHandlers) lacksAddress(u *account.User) bool {
	if !h.addresses.Enabled() || u.PartnerID != 0 || u.ID > wallet.MaxIndex {
		return false
	}
	for _, chain := range h.cfg.Chains {
		if chainAddress(u, chain) == "" {
			return true
		}
	}
	return false
}

// chainAddress is u's address on chain, "" for none.
func chainAddress(u *account.User, chain string) string {
	switch chain {
	case wallet.Ethereum:
		return u.EthereumAddress
	case wallet.BSC:
		return u.BscAddress
	case wallet.Polygon:
		return u.PolygonAddress
	case wallet.TRON:
		return u.TronAddress
	}
	return ""
}
