package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limits and amounts of the setup.
const (
	// maxMarkets is the most markets a run creates (100 events).
	maxMarkets = 100_000
	// marketsPerPool and poolsPerEvent are the server's limits on one
	// event: 1,000 markets per event.
	marketsPerPool = 50
	poolsPerEvent  = 20
	// liquidity is every market's LMSR b: deep enough that small trades
	// move the price little and a random walk of them never reaches the
	// price bounds.
	liquidity = 10_000_000
	// margin is every pool's fee.
	margin = 0.02
	// userCredit is what each user is deposited: far more than a run
	// spends.
	userCredit = 1_000_000_000
	// partnerFloat is the partner's float.
	partnerFloat = 1_000_000_000_000
	// setupParallel is how many setup requests run at once.
	setupParallel = 8
)

// user is a registered user and its Authorization header.
type user struct {
	id   int64
	auth string
}

// fixture is what the setup made for the clients.
type fixture struct {
	runID      string
	creator    user
	users      []user
	markets    []int64 // market ids, in creation order
	pools      []int64
	events     []int64
	partnerKey string
}

// prepare checks that the server answers and accepts the admin token,
// then registers a creator, creates and activates the markets, registers
// and credits the users, and runs the scenario's own preparation.
func prepare(ctx context.Context, a *api, cfg Config, sc scenario, progress io.Writer) (*fixture, error) {
	if err := a.call(ctx, http.MethodGet, "/healthz", "", nil, nil, http.StatusOK); err != nil {
		return nil, fmt.Errorf("the server at %s does not answer: %w", cfg.URL, err)
	}
	status, _, _, err := a.send(ctx, request{method: http.MethodGet, path: "/api/v1/admin/audit", auth: a.admin})
	switch {
	case err != nil:
		return nil, err
	case status == http.StatusNotFound:
		return nil, errors.New("the operator API is disabled: start the server with PREDICTKIT_ADMIN_TOKEN set")
	case status == http.StatusUnauthorized:
		return nil, errors.New("the server refuses the admin token")
	case status != http.StatusOK:
		return nil, fmt.Errorf("GET /api/v1/admin/audit: %d", status)
	}

	fx := &fixture{runID: newRunID()}
	what := plural(cfg.Markets, "market")
	if cfg.Scenario != "partner" {
		what += " and " + plural(cfg.Users, "user")
	}
	fmt.Fprintf(progress, "bench: run %s: preparing %s\n", fx.runID, what)

	fx.creator, err = register(ctx, a, fx.runID, "creator")
	if err != nil {
		return nil, err
	}
	if err := a.call(ctx, http.MethodPatch, "/api/v1/admin/users/"+itoa(fx.creator.id), a.admin,
		map[string]bool{"is_creator": true}, nil, http.StatusOK); err != nil {
		return nil, err
	}
	if err := createMarkets(ctx, a, fx, cfg.Markets); err != nil {
		return nil, err
	}
	if cfg.Scenario != "partner" {
		fx.users = make([]user, cfg.Users)
		err := parallel(ctx, cfg.Users, func(ctx context.Context, i int) error {
			u, err := register(ctx, a, fx.runID, "u"+strconv.Itoa(i))
			if err != nil {
				return err
			}
			fx.users[i] = u
			return a.call(ctx, http.MethodPost, "/api/v1/admin/users/"+itoa(u.id)+"/credit", a.admin,
				map[string]int64{"amount_kopecks": userCredit}, nil, http.StatusOK)
		})
		if err != nil {
			return nil, err
		}
	}
	if sc.prepare != nil {
		if err := sc.prepare(ctx, a, cfg, fx); err != nil {
			return nil, err
		}
	}
	return fx, nil
}

// newRunID names a run: its UTC start time and a random suffix, so that
// runs against one server never collide.
func newRunID() string {
	return time.Now().UTC().Format("20060102-150405") + "-" + strconv.FormatUint(rand.Uint64()%(36*36*36*36), 36)
}

// plural returns "1 market", "2 markets".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// register registers bench-<run>-<who>@bench.invalid.
func register(ctx context.Context, a *api, runID, who string) (user, error) {
	var out struct {
		User struct {
			ID int64 `json:"id"`
		} `json:"user"`
		Token string `json:"access_token"`
	}
	in := map[string]string{
		"email":    "bench-" + runID + "-" + who + "@bench.invalid",
		"password": "bench-" + runID,
		"name":     "bench " + who,
	}
	if err := a.call(ctx, http.MethodPost, "/api/v1/auth/register", "", in, &out, http.StatusCreated); err != nil {
		return user{}, err
	}
	return user{id: out.User.ID, auth: "Bearer " + out.Token}, nil
}

type newMarket struct {
	Name        string  `json:"name"`
	Probability float64 `json:"probability"`
}

type newPool struct {
	Name    string      `json:"name"`
	Margin  float64     `json:"margin"`
	B       int64       `json:"lmsr_b_kopecks"`
	Markets []newMarket `json:"markets"`
}

type newEvent struct {
	Name  string    `json:"name"`
	Pools []newPool `json:"pools"`
}

type createdEvent struct {
	ID    int64 `json:"id"`
	Pools []struct {
		ID      int64 `json:"id"`
		Markets []struct {
			ID int64 `json:"id"`
		} `json:"markets"`
	} `json:"pools"`
}

// createMarkets creates n markets as the creator, in events of up to 20
// pools of up to 50 markets, and activates the events.
func createMarkets(ctx context.Context, a *api, fx *fixture, n int) error {
	perEvent := marketsPerPool * poolsPerEvent
	for e := 0; e*perEvent < n; e++ {
		ev := newEvent{Name: fmt.Sprintf("bench %s event %d", fx.runID, e+1)}
		for left := min(n-e*perEvent, perEvent); left > 0; left -= marketsPerPool {
			p := newPool{Name: fmt.Sprintf("pool %d", len(ev.Pools)+1), Margin: margin, B: liquidity}
			for m := range min(left, marketsPerPool) {
				p.Markets = append(p.Markets, newMarket{Name: fmt.Sprintf("market %d", m+1), Probability: 0.5})
			}
			ev.Pools = append(ev.Pools, p)
		}
		var out createdEvent
		if err := a.call(ctx, http.MethodPost, "/api/v1/events", fx.creator.auth, ev, &out, http.StatusCreated); err != nil {
			return err
		}
		fx.events = append(fx.events, out.ID)
		for _, p := range out.Pools {
			fx.pools = append(fx.pools, p.ID)
			for _, m := range p.Markets {
				fx.markets = append(fx.markets, m.ID)
			}
		}
		if err := a.call(ctx, http.MethodPost, "/api/v1/events/"+itoa(out.ID)+"/active", fx.creator.auth,
			map[string]bool{"is_active": true}, nil, http.StatusOK); err != nil {
			return err
		}
	}
	if len(fx.markets) != n {
		return fmt.Errorf("asked for %d markets, the server created %d", n, len(fx.markets))
	}
	return nil
}

// parallel calls f for 0 to n-1, setupParallel at a time, and returns the
// first error; after an error it starts no more calls.
func parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, setupParallel) {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// Audit is the server's ledger audit (GET /api/v1/admin/audit) at the end
// of the run.
type Audit struct {
	OK             bool     `json:"ok"`
	Sum            int64    `json:"sum"`
	Accounts       int64    `json:"accounts"`
	Postings       int64    `json:"postings"`
	Problems       []string `json:"problems"`
	EscrowProblems []string `json:"escrow_problems"`
	// Error says why the audit could not be read; OK is false then.
	Error string `json:"error,omitempty"`
}

func (a *api) audit(ctx context.Context) (Audit, error) {
	var out Audit
	err := a.call(ctx, http.MethodGet, "/api/v1/admin/audit", a.admin, nil, &out, http.StatusOK)
	if err != nil {
		return Audit{}, err
	}
	return out, nil
}
