package storagetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// ChunkedSettler is a store that settles a large market in several
// transactions (storage/postgres). A store that settles every market at
// once (storage/memory) need not implement it: the suite then checks
// that its settlements give what the chunked ones must.
type ChunkedSettler interface {
	// SettleInChunks makes a market with more than size open positions
	// settle in chunks of size positions (0: every market at once), with
	// no pause between them; interrupt, when not nil, is called after
	// each chunk with the number of chunks paid, and an error it returns
	// stops the settlement there, as a crash would.
	SettleInChunks(size int, interrupt func(chunk int) error)
	// ResumeSettlements runs the settlements left unfinished to their end.
	ResumeSettlements(ctx context.Context) error
}

var errCrash = errors.New("storagetest: the settlement stops here")

// chunkedMarket is a market with holders on both sides, and for each
// holder its balances before the market settles.
type chunkedMarket struct {
	ev      *market.Event
	m       *market.Market
	holders []*account.User
	before  []account.Balances
}

// chunkedMarket makes a market of 7 holders: 4 on YES, 3 on NO, one of
// them on both sides, and one with bonus money.
func (e *env) chunkedMarket(c *account.User) *chunkedMarket {
	e.t.Helper()
	ev := e.event(c, 0.02, 20000, 0.5)
	cm := &chunkedMarket{ev: ev, m: ev.Pools[0].Markets[0]}
	for i := range 7 {
		bonus := int64(0)
		if i == 3 {
			bonus = 2000
		}
		u := e.user("holder", 10000, bonus)
		side := market.Yes
		if i%2 == 1 {
			side = market.No
		}
		if _, err := e.buy(u, cm.m, side, int64(500+100*i)); err != nil {
			e.t.Fatal(err)
		}
		if i == 2 {
			if _, err := e.buy(u, cm.m, market.No, 300); err != nil {
				e.t.Fatal(err)
			}
		}
		cm.holders = append(cm.holders, u)
	}
	for _, u := range cm.holders {
		cm.before = append(cm.before, e.balances(u))
	}
	return cm
}

// paid is what each holder of cm was paid by its settlement.
func (e *env) paid(cm *chunkedMarket) []account.Balances {
	e.t.Helper()
	var out []account.Balances
	for i, u := range cm.holders {
		b := e.balances(u)
		out = append(out, account.Balances{Balance: b.Balance - cm.before[i].Balance, Bonus: b.Bonus - cm.before[i].Bonus})
	}
	return out
}

// resolvedAbout counts u's market_resolved notifications about event ev.
func (e *env) resolvedAbout(u *account.User, ev *market.Event) int {
	e.t.Helper()
	ns, err := e.stores.Markets.(social.NotificationStore).Notifications(e.ctx, u.ID, false, 100, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, x := range ns {
		if x.Type == social.TypeMarketResolved && x.RelatedID == ev.ID {
			n++
		}
	}
	return n
}

func testSettlementChunks(t *testing.T, newStores func(*testing.T) Stores) {
	for _, outcome := range []string{"YES", "NO", "VOID"} {
		t.Run("a market settled "+outcome+" in chunks pays each holder what one transaction pays it", func(t *testing.T) {
			e := newEnv(t, newStores)
			chunks, _ := e.stores.Markets.(ChunkedSettler)
			c := e.creator()
			once, split := e.chunkedMarket(c), e.chunkedMarket(c)
			if chunks != nil {
				chunks.SettleInChunks(0, nil)
			}
			if err := e.markets.Close(e.ctx, c.ID, once.ev.ID, once.m.PoolID, once.m.ID, outcome); err != nil {
				t.Fatal(err)
			}
			if chunks != nil {
				chunks.SettleInChunks(2, nil)
			}
			if err := e.markets.Close(e.ctx, c.ID, split.ev.ID, split.m.PoolID, split.m.ID, outcome); err != nil {
				t.Fatal(err)
			}
			if a, b := e.paid(once), e.paid(split); !slices.Equal(a, b) {
				t.Fatalf("paid %v in chunks, %v at once", b, a)
			}
			if m := e.market(split.m.ID); !m.Resolved || m.Settling || m.Outcome() != outcome {
				t.Fatalf("market after its settlement: resolved %v, settling %v, outcome %q", m.Resolved, m.Settling, m.Outcome())
			}
			e.audit()
		})
	}
	t.Run("a settlement stopped after a chunk leaves the market settling, and resumes to pay each holder once", func(t *testing.T) {
		e := newEnv(t, newStores)
		chunks, ok := e.stores.Markets.(ChunkedSettler)
		if !ok {
			t.Skip("the store settles every market at once")
		}
		if e.stores.Changes == nil {
			t.Skip("the store has no change log")
		}
		c := e.creator()
		once, split := e.chunkedMarket(c), e.chunkedMarket(c)
		chunks.SettleInChunks(0, nil)
		if err := e.markets.Close(e.ctx, c.ID, once.ev.ID, once.m.PoolID, once.m.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		chunks.SettleInChunks(2, func(chunk int) error {
			if chunk == 2 {
				return errCrash
			}
			return nil
		})
		from := e.last()
		if err := e.markets.Close(e.ctx, c.ID, split.ev.ID, split.m.PoolID, split.m.ID, "VOID"); !errors.Is(err, errCrash) {
			t.Fatalf("close stopped after chunk 2: %v", err)
		}
		if m := e.market(split.m.ID); m.Resolved || !m.Settling {
			t.Fatalf("market between chunks: resolved %v, settling %v", m.Resolved, m.Settling)
		}
		if _, err := e.buy(split.holders[0], split.m, market.Yes, 100); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("trade while settling: %v", err)
		}
		if err := e.markets.Close(e.ctx, c.ID, split.ev.ID, split.m.PoolID, split.m.ID, "YES"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("second resolution while settling: %v", err)
		}
		if es := e.since(from); len(es) != 0 {
			t.Fatalf("the change log between chunks: %v, want nothing", types(es))
		}
		e.audit()
		paidSoFar := 0
		for _, p := range e.paid(split) {
			if p != (account.Balances{}) {
				paidSoFar++
			}
		}
		if paidSoFar == 0 || paidSoFar == len(split.holders) {
			t.Fatalf("%d of %d holders paid after 2 chunks of 2 positions", paidSoFar, len(split.holders))
		}

		chunks.SettleInChunks(2, nil)
		if err := chunks.ResumeSettlements(e.ctx); err != nil {
			t.Fatal(err)
		}
		if err := chunks.ResumeSettlements(e.ctx); err != nil {
			t.Fatalf("resume with nothing left: %v", err)
		}
		if a, b := e.paid(once), e.paid(split); !slices.Equal(a, b) {
			t.Fatalf("paid %v in resumed chunks, %v at once", b, a)
		}
		if m := e.market(split.m.ID); !m.Resolved || m.Settling || !m.Voided {
			t.Fatalf("market after its settlement: resolved %v, settling %v, voided %v", m.Resolved, m.Settling, m.Voided)
		}
		if got := types(e.since(from)); !slices.Equal(got, []changelog.Type{changelog.MarketResolved}) {
			t.Fatalf("the change log of the settlement: %v, want one market_resolved", got)
		}
		for _, u := range split.holders {
			if n := e.resolvedAbout(u, split.ev); n != 1 {
				t.Fatalf("holder %d has %d market_resolved notifications, want 1", u.ID, n)
			}
		}
		e.audit()
	})
}
