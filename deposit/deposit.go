// Package deposit credits users' token deposits: a Watcher per chain
// follows the token contract's Transfer logs over the chain's JSON-RPC,
// records the transfers to users' addresses as pending deposits, and
// credits each one, once, when it has the chain's confirmations.
//
// A credit is one transaction of the store: the deposit goes from pending
// to credited only if it is still pending, with one ledger posting from
// the chain's deposits account (account.DepositsAccount) to the user,
// the change-log entries and a deposit_credited notification. The key of
// a deposit is (chain, transaction hash, log index), so a log the node
// delivers twice, or that a restarted or second watcher reads again, is
// one deposit.
//
// The package depends on no web framework: the server wires one Watcher
// per watched chain (see docs/deposits.md).
package deposit

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/wallet"
)

// The statuses of a deposit.
const (
	StatusPending  = "pending"
	StatusCredited = "credited"
)

// Reason is the reason of a deposit's ledger posting and balance entry.
const Reason = "deposit"

// Paging of a user's deposits.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// ErrInvalidCursor is a page cursor that no page gave.
var ErrInvalidCursor = errors.New("deposit: invalid cursor")

// Deposit is one token transfer to a user's address.
type Deposit struct {
	ID     int64
	UserID int64
	Chain  string
	// TxHash is the transaction's hash: 0x and 64 lower-case hexadecimal
	// digits, without the 0x on TRON (as TRON's explorers write it).
	TxHash   string
	LogIndex int64
	// BlockNumber and BlockHash are the block the transfer was seen in;
	// the deposit is credited only while the chain still has that block.
	BlockNumber int64
	BlockHash   string
	// Address is the user's address the tokens went to, in the chain's
	// form (wallet.Format).
	Address string
	// Units is the amount in the token's smallest units, a decimal
	// integer; Decimals the token's decimals when it was seen.
	Units    string
	Decimals int
	// AmountKopecks is what the deposit is credited as, at the rate when
	// it was seen: 0 for a transfer worth less than a kopeck, which is
	// listed but moves no money.
	AmountKopecks         int64
	ConfirmationsRequired int
	// Confirmations is how many blocks the chain had on the transfer's
	// own, itself included, when the watcher last read the chain; stores
	// fill it in when they read deposits.
	Confirmations int64
	Status        string
	CreatedAt     time.Time
	CreditedAt    *time.Time
}

// TokenAmount is the deposit's amount in whole tokens, an exact decimal
// without trailing zeros ("12.5", "0.000001", "3").
func (d *Deposit) TokenAmount() string { return TokenAmount(d.Units, d.Decimals) }

// TokenAmount writes units of a token with decimals as an exact decimal
// number of whole tokens.
func TokenAmount(units string, decimals int) string {
	u, ok := new(big.Int).SetString(units, 10)
	if !ok || u.Sign() < 0 {
		return "0"
	}
	s := u.String()
	if decimals <= 0 {
		return s
	}
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// Kopecks is what units of a token with decimals are credited as at
// kopecksPerToken kopecks a whole token: units × kopecksPerToken /
// 10^decimals, rounded down to the kopeck, in exact integer arithmetic.
// A value past account.MaxCredit, which no real transfer reaches, is
// reported as not fitting (ok false) rather than credited.
func Kopecks(units *big.Int, decimals int, kopecksPerToken int64) (kopecks int64, ok bool) {
	if units.Sign() < 0 || kopecksPerToken < 0 || decimals < 0 {
		return 0, false
	}
	v := new(big.Int).Mul(units, big.NewInt(kopecksPerToken))
	v.Quo(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	if !v.IsInt64() || v.Int64() > account.MaxCredit {
		return 0, false
	}
	return v.Int64(), true
}

// Posting is the ledger posting that credits d: from the chain's
// deposits account to the user's balance.
func Posting(d *Deposit, at time.Time) account.Posting {
	return account.Posting{From: account.DepositsAccount(wallet.Number(d.Chain)), To: account.UserAccount(d.UserID),
		Amount: d.AmountKopecks, Reason: Reason, At: at}
}

// Notification is the deposit_credited notification of d.
func Notification(d *Deposit, at time.Time) social.Notification {
	return social.Notification{UserID: d.UserID, Type: social.TypeDepositCredited, RelatedID: d.ID,
		RelatedType: social.RelatedDeposit, CreatedAt: at,
		Data: social.NotificationData{Amount: d.AmountKopecks, Chain: d.Chain, TokenAmount: d.TokenAmount()}}
}

// Change is the change-log entry telling d's user of d as it is now.
func Change(d *Deposit, at time.Time) changelog.Entry {
	v := d.View()
	return changelog.Entry{Type: changelog.Deposit, UserID: d.UserID, Data: v.JSON(), At: at}
}

// Cursor is how far a chain has been read.
type Cursor struct {
	// Next is the next block to read; 0 for a chain never read.
	Next int64
	// Head is the chain's head when it was last read.
	Head int64
	// Blocks are the hashes of the recent blocks read, by number: a
	// block whose hash the node no longer gives was replaced by a
	// reorganisation, and is read again.
	Blocks map[int64]string
}

// Scan is what one read of blocks From to To found.
type Scan struct {
	From, To int64
	// Head is the chain's head when they were read.
	Head int64
	// Blocks are hashes of blocks to remember (the recent ones, and
	// those holding deposits); the store forgets those below Keep.
	Blocks map[int64]string
	Keep   int64
	// Deposits are the transfers to users' addresses, pending, without
	// ids.
	Deposits []Deposit
}

// Store keeps deposits and each chain's cursor. storage/memory and
// storage/postgres implement it.
type Store interface {
	// DepositCursor returns how far chain has been read.
	DepositCursor(ctx context.Context, chain string) (Cursor, error)
	// RecordScan writes what a scan of chain found in one transaction:
	// the deposits not recorded yet (a deposit already recorded under the
	// same chain, transaction and log index is left as it is), the
	// blocks' hashes, the cursor (Next = To+1, Head) and a deposit
	// change-log entry for each new deposit. It returns the new ones.
	RecordScan(ctx context.Context, chain string, s Scan) ([]Deposit, error)
	// RewindDeposits forgets chain's blocks from block on, replaced by a
	// reorganisation: their pending deposits are deleted, their hashes
	// forgotten, and the cursor goes back to block if it was past it.
	// Credited deposits stay. It returns how many deposits it deleted.
	RewindDeposits(ctx context.Context, chain string, block int64) (int, error)
	// PendingDeposits returns chain's pending deposits in blocks up to
	// maxBlock, oldest first.
	PendingDeposits(ctx context.Context, chain string, maxBlock int64) ([]Deposit, error)
	// CreditDeposit credits deposit id if it is still pending, in one
	// transaction: status credited, the posting (none for a deposit of
	// 0 kopecks), the deposit and balance change-log entries and the
	// deposit_credited notification. It reports whether this call
	// credited it: false, and nothing changed, when it was credited
	// already or no longer exists.
	CreditDeposit(ctx context.Context, id int64, at time.Time) (Deposit, bool, error)
	// UserDeposits returns user id's deposits, newest first, at most
	// limit, with ids below before (0: from the newest).
	UserDeposits(ctx context.Context, userID int64, limit int, before int64) ([]Deposit, error)
}

// AddressBook finds users by their deposit addresses.
type AddressBook interface {
	// AddressOwners returns the user owning each of addresses (in
	// wallet.Format's form for family) that is a user's; addresses
	// nobody owns are absent.
	AddressOwners(ctx context.Context, family wallet.Family, addresses []string) (map[string]int64, error)
}
