package deposit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/predictkit/predictkit/wallet"
)

// Defaults of Config.
const (
	DefaultMaxRange   = 500
	DefaultPoll       = 5 * time.Second
	DefaultMaxBackoff = time.Minute
)

// ErrGarbage is an answer of the node that cannot be true: the head going
// back, a log outside the blocks asked for, a log whose block hash is not
// the block's, a malformed Transfer log. Nothing of the scan is written.
var ErrGarbage = errors.New("deposit: the node's answer is inconsistent")

// Config is how a Watcher reads one chain.
type Config struct {
	// Chain is the chain's name (wallet.Chains).
	Chain string
	// Token is the token contract's address.
	Token [20]byte
	// Decimals, Confirmations and KopecksPerToken are the chain's
	// settings: the token's decimals, the blocks (the transfer's own
	// included) a deposit waits for, and the rate.
	Decimals        int
	Confirmations   int
	KopecksPerToken int64
	// MaxRange is the most blocks one eth_getLogs asks for
	// (DefaultMaxRange when 0): nodes refuse wide ranges.
	MaxRange int64
	// Poll is the pause once the watcher has caught up with the head
	// (DefaultPoll when 0); MaxBackoff the longest pause after failures
	// (DefaultMaxBackoff when 0), which double from Poll.
	Poll, MaxBackoff time.Duration
	// Start is the first block of a chain never read; 0 starts with the
	// blocks still short of their confirmations at the head then.
	Start int64
	// Now is the clock (time.Now when nil); Logger the log (discarded
	// when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// Status is a watcher's state, for /readyz and the metrics.
type Status struct {
	Chain string `json:"chain"`
	// Active: the watcher is running here (with several instances, only
	// the one holding the chain's lock runs its watcher).
	Active bool `json:"active"`
	// OK: the last pass over the chain succeeded.
	OK bool `json:"ok"`
	// Head is the chain's head, Next the next block to read, as of the
	// last successful pass; Lag is how many blocks are left to read.
	Head int64 `json:"head"`
	Next int64 `json:"next_block"`
	Lag  int64 `json:"lag_blocks"`
	// Error is the last pass's error, "" when it succeeded.
	Error string `json:"error,omitempty"`
	// Since is when the watcher entered its state (OK or failing);
	// LastOK when a pass last succeeded (zero before any).
	Since  time.Time `json:"since"`
	LastOK time.Time `json:"last_ok,omitzero"`
	// Credited and Failures count credits and failed passes since start.
	Credited int64 `json:"credited"`
	Failures int64 `json:"failures"`
}

// Watcher reads one chain and credits its deposits. Run it in one
// goroutine, one at a time per chain (several instances share the chain
// through an exclusive lock): a second one would credit nothing twice,
// but would read everything twice.
type Watcher struct {
	cfg    Config
	family wallet.Family
	token  common.Address
	node   Node
	store  Store
	book   AddressBook
	log    *slog.Logger

	mu     sync.Mutex
	status Status
}

// New returns a watcher of cfg.Chain reading node.
func New(cfg Config, node Node, store Store, book AddressBook) (*Watcher, error) {
	family, ok := wallet.FamilyOf(cfg.Chain)
	switch {
	case !ok:
		return nil, fmt.Errorf("deposit: unknown chain %q", cfg.Chain)
	case cfg.Confirmations < 1:
		return nil, fmt.Errorf("deposit: %s: confirmations must be at least 1", cfg.Chain)
	case cfg.Decimals < 0 || cfg.KopecksPerToken < 1:
		return nil, fmt.Errorf("deposit: %s: decimals must be 0 or more and the rate at least 1 kopeck", cfg.Chain)
	}
	if cfg.MaxRange <= 0 {
		cfg.MaxRange = DefaultMaxRange
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{cfg: cfg, family: family, token: common.Address(cfg.Token), node: node, store: store, book: book,
		log: log.With("chain", cfg.Chain)}
	w.status = Status{Chain: cfg.Chain, Since: cfg.Now()}
	return w, nil
}

// Status returns the watcher's state.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

func (w *Watcher) setActive(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status.Active = on
}

// Run reads the chain until ctx is done: a pass, then at once another
// while blocks are left to read, else after Config.Poll; after a failed
// pass it waits twice as long as after the one before, up to
// Config.MaxBackoff. It returns ctx's error.
func (w *Watcher) Run(ctx context.Context) error {
	w.setActive(true)
	defer w.setActive(false)
	wait := time.Duration(0)
	backoff := w.cfg.Poll
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		caughtUp, err := w.Step(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			wait, backoff = backoff, min(2*backoff, w.cfg.MaxBackoff)
		case caughtUp:
			wait, backoff = w.cfg.Poll, w.cfg.Poll
		default:
			wait, backoff = 0, w.cfg.Poll
		}
	}
}

// Step makes one pass over the chain: the head, a check of the recent
// blocks against reorganisations, a read of at most Config.MaxRange
// blocks from the cursor, and the credit of the deposits that have their
// confirmations. It reports whether the cursor has reached the head.
func (w *Watcher) Step(ctx context.Context) (caughtUp bool, err error) {
	caughtUp, head, next, err := w.step(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.cfg.Now()
	if err != nil {
		if w.status.OK || w.status.Failures == 0 {
			w.status.Since = now
			w.log.Warn("deposits: reading the chain failed; backing off", "err", err)
		}
		w.status.OK, w.status.Error = false, err.Error()
		w.status.Failures++
		return false, err
	}
	if !w.status.OK {
		w.status.Since = now
		if w.status.Failures > 0 {
			w.log.Info("deposits: reading the chain again")
		}
	}
	w.status.OK, w.status.Error, w.status.LastOK = true, "", now
	w.status.Head, w.status.Next, w.status.Lag = head, next, max(head-next+1, 0)
	return caughtUp, nil
}

func (w *Watcher) step(ctx context.Context) (caughtUp bool, headN, nextN int64, err error) {
	h, err := w.node.BlockNumber(ctx)
	if err != nil {
		return false, 0, 0, fmt.Errorf("eth_blockNumber: %w", err)
	}
	head := int64(h)
	cur, err := w.store.DepositCursor(ctx, w.cfg.Chain)
	if err != nil {
		return false, 0, 0, fmt.Errorf("store: %w", err)
	}
	if head < cur.Head {
		return false, 0, 0, fmt.Errorf("%w: the head went back from block %d to %d", ErrGarbage, cur.Head, head)
	}
	hashes := map[int64]common.Hash{} // the node's, read in this pass
	hashOf := func(n int64) (common.Hash, error) {
		if h, ok := hashes[n]; ok {
			return h, nil
		}
		h, err := w.node.BlockHash(ctx, uint64(n))
		if err != nil {
			return common.Hash{}, fmt.Errorf("eth_getBlockByNumber %d: %w", n, err)
		}
		hashes[n] = h
		return h, nil
	}
	// A reorganisation: the newest block read is no longer the chain's.
	// Walk down to the newest block that still is, and read again from
	// the one above it.
	if fork, err := w.fork(cur, hashOf); err != nil {
		return false, 0, 0, err
	} else if fork > 0 {
		n, err := w.store.RewindDeposits(ctx, w.cfg.Chain, fork)
		if err != nil {
			return false, 0, 0, fmt.Errorf("store: %w", err)
		}
		w.log.Warn("deposits: reorganisation; reading again", "from_block", fork, "dropped_pending", n)
		return false, head, fork, nil
	}
	next := cur.Next
	if next == 0 {
		next = w.cfg.Start
		if next <= 0 {
			next = max(head-int64(w.cfg.Confirmations)+1, 1)
		}
	}
	if next <= head {
		to := min(head, next+w.cfg.MaxRange-1)
		if err := w.scan(ctx, next, to, head, hashOf); err != nil {
			return false, 0, 0, err
		}
		next = to + 1
	}
	if err := w.credit(ctx, head, hashOf); err != nil {
		return false, 0, 0, err
	}
	return next > head, head, next, nil
}

// fork returns the lowest recent block whose hash changed, or 0.
func (w *Watcher) fork(cur Cursor, hashOf func(int64) (common.Hash, error)) (int64, error) {
	fork := int64(0)
	for _, n := range slices.Backward(slices.Sorted(maps.Keys(cur.Blocks))) {
		h, err := hashOf(n)
		if err != nil {
			return 0, err
		}
		if strings.EqualFold(h.Hex(), cur.Blocks[n]) {
			break
		}
		fork = n
	}
	return fork, nil
}

// transfer is one Transfer log to an address.
type transfer struct {
	log   types.Log
	to    string
	units *big.Int
}

// scan reads blocks from to to and records what they hold.
func (w *Watcher) scan(ctx context.Context, from, to, head int64, hashOf func(int64) (common.Hash, error)) error {
	logs, err := w.node.TransferLogs(ctx, uint64(from), uint64(to), w.token)
	if err != nil {
		return fmt.Errorf("eth_getLogs %d-%d: %w", from, to, err)
	}
	ts := make([]transfer, 0, len(logs))
	seen := map[string]bool{}
	var addrs []string
	for _, l := range logs {
		t, err := w.transfer(l, from, to)
		if err != nil {
			return err
		}
		ts = append(ts, t)
		if !seen[t.to] {
			seen[t.to] = true
			addrs = append(addrs, t.to)
		}
	}
	owners := map[string]int64{}
	if len(addrs) > 0 {
		if owners, err = w.book.AddressOwners(ctx, w.family, addrs); err != nil {
			return fmt.Errorf("address book: %w", err)
		}
	}
	// The hashes of the blocks still short of their confirmations (for
	// the check against reorganisations), and of those holding deposits
	// (checked again before they are credited).
	window := head - int64(w.cfg.Confirmations) + 1
	s := Scan{From: from, To: to, Head: head, Blocks: map[int64]string{}, Keep: to - int64(w.cfg.Confirmations) + 1}
	for n := max(from, window); n <= to; n++ {
		h, err := hashOf(n)
		if err != nil {
			return err
		}
		s.Blocks[n] = h.Hex()
	}
	now := w.cfg.Now()
	for _, t := range ts {
		n := int64(t.log.BlockNumber)
		h, err := hashOf(n)
		if err != nil {
			return err
		}
		if t.log.BlockHash != h {
			return fmt.Errorf("%w: a log of block %d names block hash %s, the block's is %s", ErrGarbage, n, t.log.BlockHash.Hex(), h.Hex())
		}
		user, ok := owners[t.to]
		if !ok {
			continue
		}
		s.Blocks[n] = h.Hex()
		kopecks, fits := Kopecks(t.units, w.cfg.Decimals, w.cfg.KopecksPerToken)
		if !fits {
			w.log.Error("deposits: a transfer worth more than one credit may be; listed, not credited: credit it by hand",
				"tx", t.log.TxHash.Hex(), "units", t.units.String())
		}
		s.Deposits = append(s.Deposits, Deposit{UserID: user, Chain: w.cfg.Chain, TxHash: w.txHash(t.log.TxHash),
			LogIndex: int64(t.log.Index), BlockNumber: n, BlockHash: h.Hex(), Address: t.to, Units: t.units.String(),
			Decimals: w.cfg.Decimals, AmountKopecks: kopecks, ConfirmationsRequired: w.cfg.Confirmations,
			Status: StatusPending, CreatedAt: now})
	}
	news, err := w.store.RecordScan(ctx, w.cfg.Chain, s)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, d := range news {
		w.log.Info("deposits: transfer seen", "deposit", d.ID, "user", d.UserID, "block", d.BlockNumber, "head", head,
			"tx", d.TxHash, "tokens", d.TokenAmount(), "kopecks", d.AmountKopecks)
	}
	return nil
}

// transfer checks that l is a Transfer log of the token in blocks from to
// to, and reads it.
func (w *Watcher) transfer(l types.Log, from, to int64) (transfer, error) {
	n := int64(l.BlockNumber)
	switch {
	case l.Removed:
		return transfer{}, fmt.Errorf("%w: a removed log in eth_getLogs' answer", ErrGarbage)
	case n < from || n > to:
		return transfer{}, fmt.Errorf("%w: a log of block %d when blocks %d to %d were asked for", ErrGarbage, n, from, to)
	case l.Address != w.token:
		return transfer{}, fmt.Errorf("%w: a log of contract %s, not the token's", ErrGarbage, l.Address.Hex())
	case len(l.Topics) != 3 || l.Topics[0] != TransferTopic || len(l.Data) != 32:
		return transfer{}, fmt.Errorf("%w: a malformed Transfer log in transaction %s", ErrGarbage, l.TxHash.Hex())
	case l.BlockHash == (common.Hash{}) || l.TxHash == (common.Hash{}):
		return transfer{}, fmt.Errorf("%w: a log without its block or transaction hash", ErrGarbage)
	}
	// An address topic is 12 zero bytes and the address.
	if [12]byte(l.Topics[2][:12]) != [12]byte{} {
		return transfer{}, fmt.Errorf("%w: a Transfer log whose recipient is not an address, in transaction %s", ErrGarbage, l.TxHash.Hex())
	}
	to20 := [20]byte(l.Topics[2][12:])
	return transfer{log: l, to: wallet.Format(w.family, to20), units: new(big.Int).SetBytes(l.Data)}, nil
}

// txHash writes a transaction hash the chain's way.
func (w *Watcher) txHash(h common.Hash) string {
	if w.family == wallet.Tron {
		return strings.TrimPrefix(h.Hex(), "0x")
	}
	return h.Hex()
}

// credit credits the pending deposits that have their confirmations at
// head and whose block the chain still has.
func (w *Watcher) credit(ctx context.Context, head int64, hashOf func(int64) (common.Hash, error)) error {
	ds, err := w.store.PendingDeposits(ctx, w.cfg.Chain, head-int64(w.cfg.Confirmations)+1)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for _, d := range ds {
		if head-d.BlockNumber+1 < int64(d.ConfirmationsRequired) {
			continue // asked for more confirmations when it was seen
		}
		h, err := hashOf(d.BlockNumber)
		if err != nil {
			return err
		}
		if !strings.EqualFold(h.Hex(), d.BlockHash) {
			// Replaced: the next pass finds the fork and reads again.
			n, err := w.store.RewindDeposits(ctx, w.cfg.Chain, d.BlockNumber)
			if err != nil {
				return fmt.Errorf("store: %w", err)
			}
			w.log.Warn("deposits: a pending deposit's block was replaced; reading again", "block", d.BlockNumber, "dropped_pending", n)
			return nil
		}
		c, ok, err := w.store.CreditDeposit(ctx, d.ID, w.cfg.Now())
		if err != nil {
			return fmt.Errorf("store: credit deposit %d: %w", d.ID, err)
		}
		if ok {
			w.mu.Lock()
			w.status.Credited++
			w.mu.Unlock()
			w.log.Info("deposits: credited", "deposit", c.ID, "user", c.UserID, "block", c.BlockNumber, "head", head,
				"kopecks", c.AmountKopecks)
		}
	}
	return nil
}
