package withdrawal_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/wallet"
	"github.com/predictkit/predictkit/withdrawal"
)

func TestNormalizeTxHash(t *testing.T) {
	digits := strings.Repeat("Ab", 32)
	lower := strings.ToLower(digits)
	cases := []struct {
		name, chain, hash, want string
	}{
		{"an EVM hash is kept in lower case", wallet.Ethereum, "0x" + digits, "0x" + lower},
		{"an EVM hash with 0X is taken", wallet.BSC, "0X" + digits, "0x" + lower},
		{"an EVM hash needs its 0x", wallet.Polygon, digits, ""},
		{"a TRON hash drops its 0x", wallet.TRON, "0x" + digits, lower},
		{"a TRON hash without 0x is kept", wallet.TRON, digits, lower},
		{"blanks around a hash are dropped", wallet.Ethereum, " 0x" + lower + "\n", "0x" + lower},
		{"63 digits are refused", wallet.Ethereum, "0x" + lower[1:], ""},
		{"65 digits are refused", wallet.TRON, lower + "a", ""},
		{"a non-hexadecimal digit is refused", wallet.Ethereum, "0x" + lower[:63] + "g", ""},
		{"an empty hash is refused", wallet.TRON, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := withdrawal.NormalizeTxHash(c.chain, c.hash)
			if c.want == "" {
				if !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("%q: got %q, %v; want invalid input", c.hash, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("%q: got %q, %v; want %q", c.hash, got, err, c.want)
			}
		})
	}
}

func TestCheckAddress(t *testing.T) {
	cases := []struct {
		name, chain, address string
		ok                   bool
	}{
		{"an EIP-55 address on ethereum", wallet.Ethereum, "0x52908400098527886E0F7030069857D2E4169EE7", true},
		{"the same on bsc", wallet.BSC, "0x52908400098527886E0F7030069857D2E4169EE7", true},
		{"a TRON address on tron", wallet.TRON, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", true},
		{"an all-lower-case EVM address carries no checksum", wallet.Polygon, "0x52908400098527886e0f7030069857d2e4169ee7", false},
		{"one letter's case wrong fails EIP-55", wallet.Ethereum, "0x52908400098527886E0F7030069857D2E4169Ee7", false},
		{"a TRON address on an EVM chain", wallet.Ethereum, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", false},
		{"an EVM address on tron", wallet.TRON, "0x52908400098527886E0F7030069857D2E4169EE7", false},
		{"a TRON address with a changed character", wallet.TRON, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", false},
		{"an empty address", wallet.TRON, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := withdrawal.CheckAddress(c.chain, c.address)
			if c.ok != (err == nil) {
				t.Fatalf("%s %q: %v", c.chain, c.address, err)
			}
			if err != nil && !(errors.Is(err, withdrawal.ErrInvalidAddress) && errors.Is(err, wallet.ErrInvalidAddress)) {
				t.Fatalf("%v matches neither ErrInvalidAddress", err)
			}
		})
	}
}

func TestAuditPending(t *testing.T) {
	cases := []struct {
		name     string
		states   []withdrawal.PendingState
		problems int
	}{
		{"a pending withdrawal holding its amount is sound", []withdrawal.PendingState{{ID: 1, Status: withdrawal.StatusPending, Amount: 500, Balance: 500}}, 0},
		{"a decided one holding nothing is sound", []withdrawal.PendingState{{ID: 2, Status: withdrawal.StatusPaid, Amount: 500}}, 0},
		{"a pending one holding less is a problem", []withdrawal.PendingState{{ID: 3, Status: withdrawal.StatusPending, Amount: 500, Balance: 499}}, 1},
		{"a paid one still holding money is a problem", []withdrawal.PendingState{{ID: 4, Status: withdrawal.StatusPaid, Amount: 500, Balance: 500}}, 1},
		{"a cancelled one refunded twice is a problem", []withdrawal.PendingState{{ID: 5, Status: withdrawal.StatusCancelled, Amount: 500, Balance: -500}}, 1},
		{"money in the account of no withdrawal is a problem", []withdrawal.PendingState{{ID: 6, Balance: 1}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := withdrawal.AuditPending(c.states); len(got) != c.problems {
				t.Fatalf("problems %v, want %d", got, c.problems)
			}
		})
	}
}

func TestRequestChecks(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	u, _, err := accounts.Register(ctx, account.Registration{Email: "r@example.com", Password: "correct horse battery", Name: "R"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Credit(ctx, u.ID, 10_000, false); err != nil {
		t.Fatal(err)
	}
	wd := withdrawal.NewService(store, accounts)
	const addr = "0x52908400098527886E0F7030069857D2E4169EE7"
	cases := []struct {
		name string
		r    withdrawal.Request
		want error
	}{
		{"an unknown chain is invalid input", withdrawal.Request{UserID: u.ID, Chain: "solana", Address: addr, Amount: 1}, input.ErrInvalid},
		{"no amount is invalid input", withdrawal.Request{UserID: u.ID, Chain: wallet.Ethereum, Address: addr}, input.ErrInvalid},
		{"an amount past the bound is invalid input", withdrawal.Request{UserID: u.ID, Chain: wallet.Ethereum, Address: addr, Amount: account.MaxCredit + 1}, input.ErrInvalid},
		{"a bad address is ErrInvalidAddress", withdrawal.Request{UserID: u.ID, Chain: wallet.Ethereum, Address: "0x00", Amount: 1}, withdrawal.ErrInvalidAddress},
		{"more than the balance is insufficient funds", withdrawal.Request{UserID: u.ID, Chain: wallet.Ethereum, Address: addr, Amount: 10_001}, account.ErrInsufficientFunds},
		{"the whole balance with no limit is allowed", withdrawal.Request{UserID: u.ID, Chain: wallet.Ethereum, Address: addr, Amount: 10_000}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := wd.Request(ctx, c.r)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	for _, bad := range []struct {
		name   string
		reason string
	}{{"a blank reason", "  "}, {"a reason past 500 characters", strings.Repeat("я", 501)}, {"a reason with a control character", "bad\x00"}} {
		t.Run(bad.name+" is refused before anything is read", func(t *testing.T) {
			if _, err := wd.Reject(ctx, 1, bad.reason); !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("got %v", err)
			}
		})
	}
	t.Run("a cursor no page gave is refused", func(t *testing.T) {
		for _, c := range []string{"x", "dzA", "MTI", "w-1"} {
			if _, err := wd.List(ctx, u.ID, 10, c); !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("cursor %q: %v", c, err)
			}
		}
	})
}
