package reliability

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// The model's run lengths. CI runs the defaults; a long run sets more:
//
//	go test ./reliability -run TestMoneyModel -seeds 2000 -ops 5000 -pgseeds 100 -pgops 2000 -timeout 3h
//	go test ./reliability -run TestMoneyModel -from 5000 -seeds 500   # other seeds than CI's
//	go test ./reliability -run TestMoneyModel -seed 1234 -ops 5000     # one seed, both stores
//
// Each flag can also come from the environment (PREDICTKIT_MODEL_SEED,
// _FROM, _SEEDS, _OPS, _PGSEEDS, _PGOPS), for runs through scripts.
var (
	flagFrom    = flag.Uint64("from", envUint("PREDICTKIT_MODEL_FROM", 1), "money model: the first seed of -seeds and -pgseeds")
	flagSeed    = flag.Uint64("seed", envUint("PREDICTKIT_MODEL_SEED", 0), "run only this seed of the money model, on both stores (0: -seeds and -pgseeds seeds from -from)")
	flagSeeds   = flag.Int("seeds", int(envUint("PREDICTKIT_MODEL_SEEDS", 20)), "money model: seeds on the memory store")
	flagOps     = flag.Int("ops", int(envUint("PREDICTKIT_MODEL_OPS", 500)), "money model: operations per seed on the memory store")
	flagPGSeeds = flag.Int("pgseeds", int(envUint("PREDICTKIT_MODEL_PGSEEDS", 4)), "money model: seeds on PostgreSQL, each checked against memory")
	flagPGOps   = flag.Int("pgops", int(envUint("PREDICTKIT_MODEL_PGOPS", 300)), "money model: operations per seed on PostgreSQL")
)

func envUint(name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// modelStats are the figures of one run, for the README.
type modelStats struct {
	ops, accepted, refused, replays, settlements, voids, byOperator int
	// moves are the accepted moves of a finish_at; closed the trades
	// refused as market_closed (resolved, or outside the window).
	moves, closed int
	// The making of markets: proposals made and decided, answers added,
	// disputes, proposals settled at their deadline.
	proposals, decisions, answers, disputes, due int
	// rewards are the referral rewards paid.
	rewards int
}

func (s *modelStats) sum(o modelStats) {
	s.ops, s.accepted, s.refused, s.replays, s.settlements = s.ops+o.ops, s.accepted+o.accepted, s.refused+o.refused, s.replays+o.replays, s.settlements+o.settlements
	s.voids, s.byOperator = s.voids+o.voids, s.byOperator+o.byOperator
	s.moves, s.closed = s.moves+o.moves, s.closed+o.closed
	s.proposals, s.decisions, s.answers, s.disputes, s.due = s.proposals+o.proposals, s.decisions+o.decisions, s.answers+o.answers, s.disputes+o.disputes, s.due+o.due
	s.rewards += o.rewards
}

// making describes the figures of the making of markets.
func (s modelStats) making() string {
	return fmt.Sprintf("%d proposals (%d decided), %d answers added, %d disputes, %d proposals settled at their deadline, %d referral rewards",
		s.proposals, s.decisions, s.answers, s.disputes, s.due, s.rewards)
}

func (s *modelStats) add(o op, out outcome) {
	s.ops++
	switch {
	case out.Replayed:
		s.replays++
	case out.ok():
		s.accepted++
		switch o.kind {
		case opSettle:
			s.settlements++
			if o.void {
				s.voids++
			}
			if o.operator {
				s.byOperator++
			}
		case opMoveFinish:
			s.moves++
		case opPropose:
			s.proposals++
		case opDecide:
			s.decisions++
		case opAddAnswer:
			s.answers++
		case opDispute:
			s.disputes++
		case opSettleDue:
			s.due += int(out.Amount)
		}
	default:
		s.refused++
		if out.Err == "market_closed" {
			s.closed++
		}
	}
}

// plus is the figures of two runs together.
// TestMoneyModel: random sequences of every money operation keep the
// ledger whole after each step, and PostgreSQL does exactly what the
// in-memory store does.
func TestMoneyModel(t *testing.T) {
	memSeeds, pgSeeds := seedRange(*flagFrom, *flagSeeds), seedRange(*flagFrom, *flagPGSeeds)
	memOps, pgOps := *flagOps, *flagPGOps
	if *flagSeed != 0 {
		memSeeds, pgSeeds = []uint64{*flagSeed}, []uint64{*flagSeed}
		if flagSet("ops") && !flagSet("pgops") {
			pgOps = memOps
		}
	}
	t.Run("the memory store keeps every kopeck", func(t *testing.T) {
		var total modelStats
		start := time.Now()
		for _, seed := range memSeeds {
			t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
				total.sum(runModel(t, seed, memOps, false))
			})
		}
		t.Logf("memory: %d seeds × %d operations: %d accepted, %d refused (%d trades on closed markets), %d partner replays, %d settlements (%d voids, %d by the operator), %d moves of finish_at, %s, audited after each; %v",
			len(memSeeds), memOps, total.accepted, total.refused, total.closed, total.replays, total.settlements, total.voids, total.byOperator, total.moves, total.making(), time.Since(start).Round(time.Millisecond))
	})
	t.Run("PostgreSQL does what the memory store does", func(t *testing.T) {
		pgtest.URL(t)
		var total modelStats
		start := time.Now()
		for _, seed := range pgSeeds {
			t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
				total.sum(runModel(t, seed, pgOps, true))
			})
		}
		t.Logf("PostgreSQL: %d seeds × %d operations: %d accepted, %d refused (%d trades on closed markets), %d partner replays, %d settlements (%d voids, %d by the operator), %d moves of finish_at, %s, same outcomes and balances as memory; %v",
			len(pgSeeds), pgOps, total.accepted, total.refused, total.closed, total.replays, total.settlements, total.voids, total.byOperator, total.moves, total.making(), time.Since(start).Round(time.Millisecond))
	})
}

func seedRange(from uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)
	}
	return out
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set || os.Getenv("PREDICTKIT_MODEL_"+strings.ToUpper(name)) != ""
}

// runModel runs ops operations of seed on a memory world and, with pg,
// on a PostgreSQL world in lockstep.
func runModel(t *testing.T, seed uint64, ops int, pg bool) modelStats {
	worlds := []*world{newWorld(t, "memory", memory.New())}
	if pg {
		worlds = append(worlds, newWorld(t, "postgres", pgtest.New(t)))
	}
	g, sh := newGen(seed), newShadow()
	sh.challenge = challengeSeed(seed)
	for _, w := range worlds {
		w.setMaking(sh.challenge)
	}
	var stats modelStats
	var history []string
	reproduce := fmt.Sprintf("reproduce: go test ./reliability -run 'TestMoneyModel' -seed %d -ops %d", seed, ops)
	fail := func(step int, format string, args ...any) {
		t.Helper()
		tail := history[max(0, len(history)-15):]
		t.Fatalf("seed %d, operation %d: %s\nlast operations:\n  %s\n%s", seed, step, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "), reproduce)
	}
	for step := range ops {
		o := g.next(sh)
		var outs []outcome
		for _, w := range worlds {
			out, err := w.apply(o)
			if err != nil {
				history = append(history, fmt.Sprintf("%d: %s -> %s error", step, o, w.name))
				fail(step, "%s: %s: %v", w.name, o, err)
			}
			outs = append(outs, out)
		}
		history = append(history, fmt.Sprintf("%d: %s -> %s", step, o, outs[0]))
		for _, out := range outs[1:] {
			if out != outs[0] {
				fail(step, "%s: memory %s, postgres %s", o, outs[0], out)
			}
		}
		if want, known := sh.expect(o); known && want != outs[0].Err {
			fail(step, "%s: the model expects %q, the stores answered %s", o, want, outs[0])
		}
		if o.kind == opPartnerBet || o.kind == opPartnerSell {
			if o.retry >= 0 && sh.partnerReqs[o.retry].accepted && !o.conflict && !outs[0].Replayed {
				fail(step, "%s: a repeat of an accepted request ran again: %s", o, outs[0])
			}
		}
		stats.add(o, outs[0])
		touched := sh.record(o, outs[0])
		for _, w := range worlds {
			if err := w.audit(); err != nil {
				fail(step, "%s: after %s: %v", w.name, o, err)
			}
			if err := checkHolders(w, sh, touched); err != nil {
				fail(step, "%s: after %s: %v", w.name, o, err)
			}
			if o.kind == opGrowth {
				if err := checkGrowth(w, sh); err != nil {
					fail(step, "%s: after %s: %v", w.name, o, err)
				}
			}
			if o.kind != opNewEvent && o.kind != opDeposit && o.kind != opFundFloat && sh.markets[o.market].exclusive {
				if err := checkPool(w, o.market); err != nil {
					fail(step, "%s: after %s: %v", w.name, o, err)
				}
			}
			if o.kind == opFundFloat || o.kind == opPartnerBet {
				if err := checkFloats(w, sh); err != nil {
					fail(step, "%s: after %s: %v", w.name, o, err)
				}
			}
			if o.kind == opAddAnswer && outs[0].ok() {
				// Every claim is kept: the positions the split made.
				if err := checkPositions(w, sh, everyHolder()); err != nil {
					fail(step, "%s: after %s: %v", w.name, o, err)
				}
			}
			if o.kind == opPartnerBet || o.kind == opPartnerSell {
				// A refused first bet leaves no sub-account behind.
				if err := checkPositions(w, sh, []holder{{o.partner, o.ext}}); err != nil {
					fail(step, "%s: after %s: %v", w.name, o, err)
				}
			}
		}
	}
	// The growth consumer catches up at the end, as it does on a server.
	last := op{kind: opGrowth, amount: 1 + int64(seed%8), retry: -1}
	for _, w := range worlds {
		if _, err := w.apply(last); err != nil {
			fail(ops, "%s: %s: %v", w.name, last, err)
		}
	}
	sh.record(last, outcome{})
	for _, w := range worlds {
		if err := checkGrowth(w, sh); err != nil {
			fail(ops, "%s at the end: %v", w.name, err)
		}
	}
	stats.rewards = sh.growth.rewards
	// The end: every account of every world, the floats, every holder's
	// balance and positions, and every market's trade log.
	every := everyHolder()
	var first map[string]int64
	for _, w := range worlds {
		if err := checkHolders(w, sh, every); err != nil {
			fail(ops, "%s at the end: %v", w.name, err)
		}
		if err := checkFloats(w, sh); err != nil {
			fail(ops, "%s at the end: %v", w.name, err)
		}
		if err := checkPositions(w, sh, every); err != nil {
			fail(ops, "%s at the end: %v", w.name, err)
		}
		if err := checkTradeLogs(w, sh); err != nil {
			fail(ops, "%s at the end: %v", w.name, err)
		}
		l, err := w.ledger()
		if err != nil {
			fail(ops, "%s: ledger: %v", w.name, err)
		}
		if first == nil {
			first = l
			continue
		}
		if d := diffLedgers(first, l, worlds[0].name, w.name); len(d) > 0 {
			fail(ops, "the final balances differ:\n  %s", strings.Join(d, "\n  "))
		}
	}
	return stats
}

// checkPool checks the exclusive pool of market i: its prices sum to 1
// and each market shows the pool's binary view.
func checkPool(w *world, i int) error {
	p, err := w.markets.Pool(w.ctx, w.mkts[i].pool)
	if err != nil {
		return err
	}
	ex, _, err := market.PoolPricer(p, w.mkts[i].id)
	if err != nil {
		return err
	}
	views := ex.BinaryViews()
	sum := 0.0
	for j, m := range p.Markets { // in id order, as the pricer's
		if m.QYes != views[j].QYes || m.QNo != views[j].QNo {
			return fmt.Errorf("market %d of an exclusive pool shows (%d, %d), the pool's view is %+v", m.ID, m.QYes, m.QNo, views[j])
		}
		sum += m.YesProbability()
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("pool %d: prices sum to %v", p.ID, sum)
	}
	return nil
}

// checkHolders compares the balances of hs with the shadow's.
func checkHolders(w *world, sh *shadow, hs []holder) error {
	for _, h := range hs {
		b, err := w.holderBalance(h)
		if err != nil {
			return fmt.Errorf("balances of %s: %w", h, err)
		}
		if b.Balance != sh.balance[h] || b.Bonus != sh.bonus[h] {
			return fmt.Errorf("%s holds %d + bonus %d, the receipts say %d + bonus %d", h, b.Balance, b.Bonus, sh.balance[h], sh.bonus[h])
		}
	}
	return nil
}

func checkFloats(w *world, sh *shadow) error {
	for i, p := range w.partnerz {
		f, err := w.partners.Float(w.ctx, p.ID)
		if err != nil {
			return err
		}
		if f != sh.floats[i] {
			return fmt.Errorf("partner %d's float is %d, the receipts say %d", i, f, sh.floats[i])
		}
	}
	return nil
}

// checkPositions compares every holder's open positions with the
// shadow's.
func checkPositions(w *world, sh *shadow, hs []holder) error {
	byID := map[int64]int{}
	for i, m := range w.mkts {
		byID[m.id] = i
	}
	for _, h := range hs {
		var userID int64
		if h.partner < 0 {
			userID = w.users[h.user].ID
		} else {
			u, err := w.store.SubAccount(w.ctx, w.partnerz[h.partner].ID, externalID(h.user))
			switch {
			case errors.Is(err, partner.ErrNoAccount) && !sh.subs[h]:
				continue
			case errors.Is(err, partner.ErrNoAccount):
				return fmt.Errorf("%s has bet but has no sub-account", h)
			case err != nil:
				return err
			case !sh.subs[h]:
				return fmt.Errorf("%s never had a bet accepted but has sub-account %d", h, u.ID)
			}
			userID = u.ID
		}
		ps, err := w.store.OpenPositions(w.ctx, userID)
		if err != nil {
			return err
		}
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("market %d %s: %d", byID[p.MarketID], p.Side, p.Shares))
		}
		var want []string
		for _, k := range sh.held(h) {
			want = append(want, fmt.Sprintf("market %d %s: %d", k.market, k.side, sh.pos[k]))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s holds %v, the receipts say %v", h, got, want)
		}
	}
	return nil
}

// checkTradeLogs: every market's trade log holds exactly the trades the
// model saw executed (a replay adds none).
func checkTradeLogs(w *world, sh *shadow) error {
	for i, m := range w.mkts {
		ts, err := w.store.Trades(w.ctx, m.id)
		if err != nil {
			return err
		}
		if len(ts) != sh.markets[i].trades {
			return fmt.Errorf("market %d logs %d trades, %d were executed", i, len(ts), sh.markets[i].trades)
		}
		for _, tr := range ts {
			if tr.MarketID != m.id || (tr.Action != market.ActionBuy && tr.Action != market.ActionSell) || tr.Shares <= 0 {
				return fmt.Errorf("market %d logs a malformed trade %+v", i, *tr)
			}
		}
	}
	return nil
}

// everyHolder lists every user and every partner's external user.
func everyHolder() []holder {
	var every []holder
	for u := range modelUsers {
		every = append(every, holder{-1, u})
	}
	for p := range modelPartners {
		for e := range modelExternal {
			every = append(every, holder{p, e})
		}
	}
	return every
}
