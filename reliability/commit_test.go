package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

func openStore(t *testing.T, dbURL string) *postgres.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// on returns w's logical world served by store s instead: the same users,
// partners and markets, other connections.
func (w *world) on(s store) *world {
	c := *w
	c.store = s
	c.accounts = account.NewService(s)
	c.accounts.BcryptCost = bcrypt.MinCost
	c.markets = market.NewService(s, c.accounts)
	c.partners = partner.NewService(s, s, c.markets)
	return &c
}

// TestAmbiguousCommit cuts a transaction's connection at chosen points
// (tests/proxy: the database's answer to COMMIT never arrives) and checks
// what the store says and what the database holds: a cut before COMMIT
// is retried and runs once; a cut after COMMIT is ErrOutcomeUnknown, is
// never run again by the store, and is learned by a partner's replay.
func TestAmbiguousCommit(t *testing.T) {
	dbURL := pgtest.SchemaURL(t)
	direct := openStore(t, dbURL)
	if err := direct.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	cutURL, px := proxied(t, dbURL)
	w := newWorld(t, "direct", direct)
	if err := w.newEvent([]newMarket{{b: 100_000, margin: 0.02, prob: 0.5}}, window{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range w.users {
		if _, err := w.accounts.Credit(ctx, w.users[i].ID, 1_000_000, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.partners.FundFloat(ctx, w.partnerz[0].ID, 1_000_000); err != nil {
		t.Fatal(err)
	}
	cut := w.on(openStore(t, cutURL))
	m := w.mkts[0].id

	trades := func() int {
		t.Helper()
		ts, err := direct.Trades(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	balance := func(u int) int64 {
		t.Helper()
		b, err := direct.Balances(ctx, w.users[u].ID)
		if err != nil {
			t.Fatal(err)
		}
		return b.Balance
	}
	buy := func(u int, amount int64) error {
		_, err := cut.markets.Execute(ctx, m, market.Request{UserID: cut.users[u].ID, Side: market.Yes, Action: market.ActionBuy, Amount: amount})
		return err
	}
	bet := func(id string) (*partner.Receipt, error) {
		return cut.partners.Bet(ctx, cut.partnerz[0], partner.Bet{ExternalUserID: "ext-" + id, MarketID: m, Side: market.No, AmountKopecks: 5000, ClientBetID: id})
	}

	cases := []struct {
		name string
		at   string // the tag the proxy cuts at
		user int    // whose balance check sees before the cut
		run  func(t *testing.T) error
		// check runs after the cut; want is the error the operation must
		// give (nil: it succeeds).
		want  error
		check func(t *testing.T, before int, balanceBefore int64)
	}{
		{
			name: "a buy cut before it wrote anything is retried and runs once",
			at:   "BEGIN", run: func(*testing.T) error { return buy(0, 3000) }, want: nil,
			check: func(t *testing.T, before int, bal int64) {
				if n := trades(); n != before+1 {
					t.Errorf("%d trades after one buy", n-before)
				}
			},
		},
		{
			name: "a buy whose COMMIT answer is lost is outcome unknown and was executed once",
			at:   "COMMIT", run: func(*testing.T) error { return buy(0, 3000) }, want: storage.ErrOutcomeUnknown,
			check: func(t *testing.T, before int, bal int64) {
				if n := trades(); n != before+1 {
					t.Errorf("%d trades after a committed buy", n-before)
				}
				if got := balance(0); got >= bal || got < bal-3000 {
					t.Errorf("balance %d after a buy of at most 3000 from %d", got, bal)
				}
			},
		},
		{
			// A trade sends its writes, reads their answers (the new ids),
			// and only then sends its change-log entries with COMMIT: cut
			// among the writes' answers, it had not asked to commit, so
			// it is retried, and runs once.
			name: "a buy cut while the answers of its writes come back is retried and runs once",
			at:   "UPDATE", user: 1, run: func(*testing.T) error { return buy(1, 3000) }, want: nil,
			check: func(t *testing.T, before int, bal int64) {
				if n := trades() - before; n != 1 {
					t.Errorf("%d trades after one buy", n)
				}
				if got := balance(1); got >= bal || got < bal-3000 {
					t.Errorf("balance %d after a buy of at most 3000 from %d", got, bal)
				}
			},
		},
		{
			name: "a deposit whose COMMIT answer is lost is outcome unknown and was credited once",
			at:   "COMMIT", user: 2, run: func(*testing.T) error {
				_, err := cut.accounts.Credit(ctx, cut.users[2].ID, 777, false)
				return err
			}, want: storage.ErrOutcomeUnknown,
			check: func(t *testing.T, before int, bal int64) {
				if got := balance(2); got != bal+777 {
					t.Errorf("balance %d after a deposit of 777 to %d", got, bal)
				}
			},
		},
		{
			name: "a partner bet cut before it wrote anything is retried and runs once",
			at:   "BEGIN", run: func(*testing.T) error { _, err := bet("cut-begin"); return err }, want: nil,
			check: func(t *testing.T, before int, bal int64) {
				if n := trades(); n != before+1 {
					t.Errorf("%d trades after one bet", n-before)
				}
			},
		},
		{
			name: "a partner bet whose COMMIT answer is lost is learned by sending its client_bet_id again",
			at:   "COMMIT", run: func(*testing.T) error { _, err := bet("cut-commit"); return err }, want: storage.ErrOutcomeUnknown,
			check: func(t *testing.T, before int, bal int64) {
				rc, err := bet("cut-commit")
				if err != nil {
					t.Fatalf("the partner's retry: %v", err)
				}
				if !rc.Replayed || rc.CostKopecks <= 0 || rc.CostKopecks > 5000 {
					t.Errorf("the retry answered %+v, want the original receipt replayed", *rc)
				}
				if n := trades(); n != before+1 {
					t.Errorf("%d trades after one bet and its retry", n-before)
				}
			},
		},
		{
			name: "a settlement whose COMMIT answer is lost is outcome unknown and closing again says it is resolved",
			at:   "COMMIT", run: func(*testing.T) error {
				r := w.mkts[0]
				return cut.markets.Close(ctx, cut.creator.ID, r.event, r.pool, r.id, "NO")
			}, want: storage.ErrOutcomeUnknown,
			check: func(t *testing.T, before int, bal int64) {
				r := w.mkts[0]
				if err := cut.markets.Close(ctx, cut.creator.ID, r.event, r.pool, r.id, "NO"); !errors.Is(err, market.ErrResolved) {
					t.Errorf("closing again: %v, want market.ErrResolved", err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, bal := trades(), balance(c.user)
			cuts := px.cutCount()
			px.arm(c.at)
			err := c.run(t)
			px.arm("")
			if px.cutCount() != cuts+1 {
				t.Fatalf("the proxy cut %d connections, want 1", px.cutCount()-cuts)
			}
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("got %v, want success", err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("got %v, want %v", err, c.want)
			}
			c.check(t, before, bal)
			if err := w.audit(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAmbiguousCommitOverHTTP: the server maps a lost COMMIT answer to
// 503 outcome_unknown, and a partner that sends the same client_bet_id
// again gets the original receipt, replayed: it executed once.
func TestAmbiguousCommitOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	dbURL := pgtest.SchemaURL(t)
	cutURL, px := proxied(t, dbURL)
	p := newProc(t, cutURL)
	p.start()
	fx := setup(t, p.base, 1, 1)
	key := map[string]string{"X-Partner-Key": fx.partnerKey}
	var body map[string]any

	ctx := context.Background()
	st, b, err, extra := cutCommit(t, px, dbURL, func(attempt int) (int, []byte, error) {
		body = map[string]any{"external_user_id": "u1", "market_id": fx.markets[0], "side": "yes", "amount_kopecks": 2500,
			"client_bet_id": fmt.Sprintf("lost-commit-%d", attempt)}
		return call(ctx, http.MethodPost, p.base()+"/api/v1/partner/bet", key, body)
	})
	if err != nil || st != http.StatusServiceUnavailable || errorCode(b) != "outcome_unknown" {
		t.Fatalf("the bet whose COMMIT answer was lost: %d %s %v, want 503 outcome_unknown", st, b, err)
	}
	// The partner's retry, as the guide says: same id, same parameters.
	var got struct {
		Cost int64 `json:"cost_kopecks"`
	}
	st, hdr, b := postJSON(t, p.base()+"/api/v1/partner/bet", key, body)
	if st != http.StatusOK || hdr.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry: %d %s (Idempotent-Replayed %q), want the original receipt replayed", st, b, hdr.Get("Idempotent-Replayed"))
	}
	if err := json.Unmarshal(b, &got); err != nil || got.Cost <= 0 {
		t.Fatalf("the retry's receipt %s: %v", b, err)
	}

	u := fx.users[0]
	st, b, err, more := cutCommit(t, px, dbURL, func(int) (int, []byte, error) {
		return call(ctx, http.MethodPost, fmt.Sprintf("%s/api/v1/markets/%d/buy", p.base(), fx.markets[0]),
			map[string]string{"Authorization": "Bearer " + u.token}, map[string]any{"side": "NO", "amount_kopecks": 4000})
	})
	extra += more
	if err != nil || st != http.StatusServiceUnavailable || errorCode(b) != "outcome_unknown" {
		t.Fatalf("the buy whose COMMIT answer was lost: %d %s %v, want 503 outcome_unknown", st, b, err)
	}
	// The user learns the outcome from the profile: the position is there.
	var me struct {
		User struct {
			Balance   int64 `json:"balance"`
			Positions []struct {
				MarketID int64 `json:"market_id"`
				Side     string
			} `json:"positions"`
		} `json:"user"`
	}
	mustCall(t, http.MethodGet, p.base()+"/api/v1/auth/me", map[string]string{"Authorization": "Bearer " + u.token}, nil, &me, http.StatusOK)
	if len(me.User.Positions) != 1 || me.User.Balance > fx.credit-3900 {
		t.Fatalf("after the lost answer the profile shows %+v: the buy committed and must show", me.User)
	}

	st2 := openStore(t, dbURL)
	ts, err := st2.Trades(ctx, fx.markets[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2+extra {
		t.Fatalf("%d trades, want %d: the bet once (despite three requests), the buy and %d request(s) whose COMMIT was not the one cut", len(ts), 2+extra, extra)
	}
	var bets int
	for _, tr := range ts {
		if tr.ClientBetID == body["client_bet_id"] {
			bets++
			if tr.Amount != got.Cost {
				t.Fatalf("the bet's trade %+v does not match the replayed receipt (cost %d)", *tr, got.Cost)
			}
		}
	}
	if bets != 1 {
		t.Fatalf("%d trades of the bet whose COMMIT answer was lost, want 1", bets)
	}
	auditOverHTTP(t, p.base())
}

// cutCommit arms the proxy at COMMIT and sends send's request (attempt
// 1, 2, ...) until the proxy cuts that request's COMMIT; it returns that
// answer and how many requests succeeded before it. The server's
// change-log consumers (the leaderboard) commit on their own after every
// trade, so it first waits for them to apply everything. Even so, under
// load the proxy may read a consumer's COMMIT answer (for the trade just
// made) before the trade's own, which arrived first on another
// connection: then the request succeeds, the consumer retries by itself,
// and the scenario runs again.
func cutCommit(t *testing.T, px *cutProxy, dbURL string, send func(attempt int) (int, []byte, error)) (st int, b []byte, err error, succeeded int) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		waitConsumersCaughtUp(t, dbURL)
		px.arm("COMMIT")
		st, b, err = send(attempt)
		px.arm("")
		if err != nil || st != http.StatusOK || attempt == 5 {
			return st, b, err, succeeded
		}
		t.Logf("attempt %d: the proxy cut another connection's COMMIT and the request succeeded (%s); again", attempt, b)
		succeeded++
	}
}

// waitConsumersCaughtUp waits until every change-log consumer of the
// database at dbURL (the leaderboard, once it has started) has applied
// the whole log, so that none is about to commit.
func waitConsumersCaughtUp(t *testing.T, dbURL string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var behind bool
		err := conn.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM change_consumers)
	OR (SELECT min(after) FROM change_consumers) < (SELECT last FROM change_log_head)`).Scan(&behind)
		if err != nil {
			t.Fatal(err)
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the change-log consumers did not catch up within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
