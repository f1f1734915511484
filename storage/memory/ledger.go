package memory

import (
	"iter"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
)

// ledger is the store's postings. It only grows, by two or three postings
// a trade, so it is kept without pointers, in blocks of fixed size: as a
// []account.Posting a long run's ledger is tens of megabytes that the
// garbage collector scans on every cycle (each posting holds the pointers
// of three strings and a time.Time), and that append copies whole each
// time it outgrows its array; after a long run the two were a large part
// of the server's CPU time (docs/architecture.md has the figures).
type ledger struct {
	blocks [][]postingRec
	n      int
	// refs are the accounts the postings name, by ledgerAccount.ref.
	refs []account.Ref
	// reasons interns the postings' reasons, a handful of words.
	reasons  []string
	reasonOf map[string]uint32
}

// postingRec is an account.Posting as the ledger keeps it.
type postingRec struct {
	from, to     uint32 // in ledger.refs
	reason       uint32 // in ledger.reasons
	nsec         int32
	sec          int64
	amount, trad int64
}

const ledgerBlock = 4096

// account registers ref and returns its number in the ledger.
func (l *ledger) account(ref account.Ref) uint32 {
	l.refs = append(l.refs, account.Ref{Kind: account.Kind(strings.Clone(string(ref.Kind))), Owner: ref.Owner})
	return uint32(len(l.refs) - 1)
}

// add appends p, whose accounts are from and to.
func (l *ledger) add(p account.Posting, from, to uint32) {
	r, ok := l.reasonOf[p.Reason]
	if !ok {
		if l.reasonOf == nil {
			l.reasonOf = map[string]uint32{}
		}
		r = uint32(len(l.reasons))
		reason := strings.Clone(p.Reason)
		l.reasons = append(l.reasons, reason)
		l.reasonOf[reason] = r
	}
	if len(l.blocks) == 0 || len(l.blocks[len(l.blocks)-1]) == ledgerBlock {
		l.blocks = append(l.blocks, make([]postingRec, 0, ledgerBlock))
	}
	b := &l.blocks[len(l.blocks)-1]
	*b = append(*b, postingRec{from: from, to: to, reason: r, sec: p.At.Unix(), nsec: int32(p.At.Nanosecond()), amount: p.Amount, trad: p.TradeID})
	l.n++
}

// all yields every posting, oldest first.
func (l *ledger) all() iter.Seq[account.Posting] {
	return func(yield func(account.Posting) bool) {
		for _, b := range l.blocks {
			for _, r := range b {
				if !yield(l.posting(r)) {
					return
				}
			}
		}
	}
}

// sums returns each account's postings' sum, by ledgerAccount.ref, added
// exactly (in 128 bits): the audit compares them with the balances, and a
// sum that wrapped as the balance did would hide it.
func (l *ledger) sums() []account.Sum {
	out := make([]account.Sum, len(l.refs))
	for _, b := range l.blocks {
		for _, r := range b {
			out[r.from].Add(-r.amount) // amounts are positive: no -MinInt64
			out[r.to].Add(r.amount)
		}
	}
	return out
}

func (l *ledger) posting(r postingRec) account.Posting {
	return account.Posting{
		From: l.refs[r.from], To: l.refs[r.to], Amount: r.amount, Reason: l.reasons[r.reason],
		TradeID: r.trad, At: time.Unix(r.sec, int64(r.nsec)).UTC(),
	}
}
