package market

import "errors"

// A request with an idempotency key (a partner's trade) runs at most once,
// in four steps that live here and nowhere else:
//
//  1. Pre-read: Service.Execute looks the key up before it trades; a key
//     recorded already is answered from its trade (repeat) without
//     touching the market.
//  2. Check under the lock: the store loads the trades of the batch's
//     keys under the market's lock (State.Existing) and DecideTrades
//     answers a key recorded since the pre-read, or earlier in the same
//     batch, in the same way. Duplicates on one market therefore
//     serialize on its row.
//  3. Conflict re-read: a duplicate on another market may commit first;
//     the unique key of trades then refuses this batch (ErrDuplicateKey),
//     and retryDuplicateKeys runs it again, when step 2 finds the trade.
//  4. Repeat: the answer is the original trade, rebuilt from its row, or
//     ErrIdempotencyConflict when the key came with other parameters.

// Key is a partner's idempotency key: (partner, client_bet_id) is unique
// across every trade.
type Key struct {
	PartnerID   int64
	ClientBetID string
}

// IsZero reports whether k names no key.
func (k Key) IsZero() bool { return k.PartnerID == 0 || k.ClientBetID == "" }

// IdempotencyKey returns the key t was made under; ok is false for a trade
// made without one.
func (t *Trade) IdempotencyKey() (k Key, ok bool) {
	k = Key{PartnerID: t.PartnerID, ClientBetID: t.ClientBetID}
	return k, !k.IsZero()
}

// key returns r's idempotency key; ok is false for a request without one.
func (r *Request) key() (k Key, ok bool) {
	if r.Partner == nil {
		return Key{}, false
	}
	return r.Partner.Key, !r.Partner.Key.IsZero()
}

// repeat answers a request with digest whose key executed already as prev:
// the original trade, marked Replayed, or ErrIdempotencyConflict when the
// request differs from the one that made prev.
func repeat(prev *Trade, digest string) Result {
	if prev.RequestHash != digest {
		return Result{Err: ErrIdempotencyConflict}
	}
	return Result{Trade: prev, Replayed: true}
}

// duplicateKeyRetries bounds the re-runs of a batch that keeps losing key
// races; each lost race means another request committed, so it is small.
const duplicateKeyRetries = 3

// retryDuplicateKeys runs attempt again while it fails with
// ErrDuplicateKey: the next attempt loads the key's trade under the lock
// and answers it as a repeat.
func retryDuplicateKeys(attempt func() error) error {
	for i := 0; ; i++ {
		err := attempt()
		if errors.Is(err, ErrDuplicateKey) && i < duplicateKeyRetries {
			continue
		}
		return err
	}
}
