package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/predictkit/predictkit/client"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

const adminToken = "client-test-admin-token-0123456789"

// startServer serves the whole API on the memory store at 127.0.0.1:0
// and returns its base URL.
func startServer(t testing.TB, configure ...func(*server.Config)) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Demo = false
	cfg.AdminToken = adminToken
	cfg.BcryptCost = 4
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, f := range configure {
		f(&cfg)
	}
	app, err := server.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

func newClient(t testing.TB, base string, opts ...client.ClientOption) *client.ClientWithResponses {
	t.Helper()
	c, err := client.NewClientWithResponses(base, append([]client.ClientOption{client.WithHTTPClient(&http.Client{Timeout: 30 * time.Second})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ok checks the answer of a call with client.Check: the returned function
// fails the test unless the server answered 2xx, and returns the answer.
func ok[R client.Response](res R, err error) func(testing.TB) R {
	res, err = client.Check(res, err)
	return func(t testing.TB) R {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

// refusal returns err as an *APIError, failing the test when it is not one.
func refusal(t testing.TB, err error) *client.APIError {
	t.Helper()
	var e *client.APIError
	if !errors.As(err, &e) {
		t.Fatalf("want an *client.APIError, got %T %v", err, err)
	}
	return e
}

// errOf is the error client.Check makes of a call's answer.
func errOf[R client.Response](res R, err error) error {
	_, err = client.Check(res, err)
	return err
}

func ptr[T any](v T) *T { return &v }

// world is a server with a user who holds money and a market to trade on.
type world struct {
	base     string
	anon     *client.ClientWithResponses // no credentials
	operator *client.ClientWithResponses // the admin token
	user     client.RequestEditorFn      // the user's access token, per call
	userID   int64
	marketID int64
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{base: startServer(t)}
	w.anon = newClient(t, w.base)
	w.operator = newClient(t, w.base, client.WithBearerToken(adminToken))
	reg := ok(w.anon.RegisterWithResponse(ctx, client.RegisterRequest{Email: "ann@example.com", Password: "correct horse battery", Name: "Ann"}))(t)
	w.user, w.userID = client.BearerToken(reg.JSON201.AccessToken), reg.JSON201.User.ID
	ok(w.operator.AdminSetRolesWithResponse(ctx, w.userID, client.RolesPatch{IsCreator: ptr(true)}))(t)
	ok(w.operator.AdminCreditWithResponse(ctx, w.userID, client.CreditRequest{AmountKopecks: 100_000}))(t)
	ev := ok(w.anon.CreateEventWithResponse(ctx, client.NewEvent{Name: "Cup final", Pools: []client.NewPool{{
		Name: "Winner", LmsrBKopecks: 10_000, Margin: 0.02,
		Markets: []client.NewMarket{{Name: "Home team wins", Probability: 0.5}},
	}}}, w.user))(t)
	w.marketID = ev.JSON201.Pools[0].Markets[0].ID
	return w
}

func TestUserCalls(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)

	t.Run("the access token from register authenticates the user", func(t *testing.T) {
		me := ok(w.anon.GetMeWithResponse(ctx, w.user))(t)
		if me.JSON200.User.Email != "ann@example.com" || me.JSON200.User.Balance != 100_000 || !me.JSON200.User.IsCreator {
			t.Errorf("me: %+v", me.JSON200.User)
		}
	})
	t.Run("log-in returns a token that works like the first", func(t *testing.T) {
		in := ok(w.anon.LoginWithResponse(ctx, client.LoginRequest{Email: "ann@example.com", Password: "correct horse battery"}))(t)
		me := ok(w.anon.GetMeWithResponse(ctx, client.BearerToken(in.JSON200.AccessToken)))(t)
		if me.JSON200.User.ID != w.userID {
			t.Errorf("logged in as %d, want %d", me.JSON200.User.ID, w.userID)
		}
	})
	t.Run("a call's token overrides the client's", func(t *testing.T) {
		me := ok(w.operator.GetMeWithResponse(ctx, w.user))(t)
		if me.JSON200.User.ID != w.userID {
			t.Errorf("the operator's client with the user's token is user %d, want %d", me.JSON200.User.ID, w.userID)
		}
	})

	var quote *client.Quote
	t.Run("a quote prices a buy and trades nothing", func(t *testing.T) {
		q := ok(w.anon.QuoteWithResponse(ctx, w.marketID, &client.QuoteParams{Side: client.QuoteParamsSideYES, AmountKopecks: ptr(int64(10_000))}))(t)
		quote = q.JSON200
		if quote.Shares <= 0 || quote.CostKopecks == nil || *quote.CostKopecks > 10_000 || quote.PriceBefore != 0.5 {
			t.Fatalf("quote: %+v", quote)
		}
		m := ok(w.anon.GetMarketWithResponse(ctx, w.marketID))(t)
		if m.JSON200.Volume != 0 {
			t.Errorf("a quote moved the market: volume %d", m.JSON200.Volume)
		}
	})
	t.Run("a buy gets what the quote said and charges the balance", func(t *testing.T) {
		b := ok(w.anon.BuyWithResponse(ctx, w.marketID, client.BuyRequest{Side: client.BuyRequestSideYES, AmountKopecks: 10_000}, w.user))(t)
		if b.JSON200.Shares != quote.Shares || b.JSON200.CostKopecks != *quote.CostKopecks {
			t.Errorf("bought %d shares for %d, the quote said %d for %d", b.JSON200.Shares, b.JSON200.CostKopecks, quote.Shares, *quote.CostKopecks)
		}
		if b.JSON200.Balance != 100_000-b.JSON200.CostKopecks {
			t.Errorf("balance %d after paying %d of 100000", b.JSON200.Balance, b.JSON200.CostKopecks)
		}
	})

	refusals := []struct {
		name   string
		call   func() error
		status int
		code   string
		detail bool
	}{
		{"a buy whose guard the price has passed is 409 price_moved", func() error {
			_, err := client.Check(w.anon.BuyWithResponse(ctx, w.marketID, client.BuyRequest{Side: client.BuyRequestSideYES, AmountKopecks: 10_000, MinShares: ptr(quote.Shares)}, w.user))
			return err
		}, http.StatusConflict, "price_moved", false},
		{"a buy without a token is 401 unauthorized", func() error {
			_, err := client.Check(w.anon.BuyWithResponse(ctx, w.marketID, client.BuyRequest{Side: client.BuyRequestSideYES, AmountKopecks: 100}))
			return err
		}, http.StatusUnauthorized, "unauthorized", false},
		{"a buy over the balance is 400 insufficient_funds", func() error {
			_, err := client.Check(w.anon.BuyWithResponse(ctx, w.marketID, client.BuyRequest{Side: client.BuyRequestSideNO, AmountKopecks: 1_000_000}, w.user))
			return err
		}, http.StatusBadRequest, "insufficient_funds", false},
		{"a side the server does not know is 400 invalid_request with the field in the detail", func() error {
			_, err := client.Check(w.anon.BuyWithResponse(ctx, w.marketID, client.BuyRequest{Side: "MAYBE", AmountKopecks: 100}, w.user))
			return err
		}, http.StatusBadRequest, "invalid_request", true},
		{"an unknown market is 404 market_not_found", func() error {
			_, err := client.Check(w.anon.GetMarketWithResponse(ctx, 999_999))
			return err
		}, http.StatusNotFound, "market_not_found", false},
		{"a wrong password is 401 invalid_credentials", func() error {
			_, err := client.Check(w.anon.LoginWithResponse(ctx, client.LoginRequest{Email: "ann@example.com", Password: "wrong password"}))
			return err
		}, http.StatusUnauthorized, "invalid_credentials", false},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			before := ok(w.anon.GetMeWithResponse(ctx, w.user))(t).JSON200.User.Balance
			e := refusal(t, c.call())
			if e.StatusCode != c.status || e.Code != c.code || (e.Detail != "") != c.detail {
				t.Errorf("got %d %q %q, want %d %q (detail: %v)", e.StatusCode, e.Code, e.Detail, c.status, c.code, c.detail)
			}
			if e.RequestID == "" {
				t.Error("the error lacks the answer's X-Request-ID")
			}
			if after := ok(w.anon.GetMeWithResponse(ctx, w.user))(t).JSON200.User.Balance; after != before {
				t.Errorf("a refused request moved the balance from %d to %d", before, after)
			}
		})
	}
}

func TestPartnerCalls(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	np := ok(w.operator.AdminCreatePartnerWithResponse(ctx, client.NewPartnerRequest{Name: "Example Bookmaker"}))(t)
	ok(w.operator.AdminFundPartnerFloatWithResponse(ctx, np.JSON201.ID, client.FloatRequest{AmountKopecks: 100_000}))(t)
	p := newClient(t, w.base, client.WithPartnerKey(np.JSON201.Key))

	const user = "customer/42 öü" // a slash, a space and non-ASCII travel escaped in the path
	bet := client.PartnerBetRequest{ExternalUserID: user, MarketID: w.marketID, Side: client.PartnerBetRequestSideYes, AmountKopecks: 20_000, ClientBetID: "bet-0001"}
	first := ok(p.PartnerBetWithResponse(ctx, bet))(t)

	t.Run("a bet is accepted once and its receipt says what it bought", func(t *testing.T) {
		r := first.JSON200
		if r.Status != client.PartnerBetReceiptStatusAccepted || r.SharesDelta <= 0 || r.CostKopecks > 20_000 || r.ClientBetID != "bet-0001" {
			t.Errorf("receipt: %+v", r)
		}
		if first.Headers200 == nil || first.Headers200.IdempotentReplayed != nil {
			t.Errorf("the first execution says Idempotent-Replayed: %+v", first.Headers200)
		}
	})
	t.Run("the same bet again is replayed byte for byte and executes nothing", func(t *testing.T) {
		again := ok(p.PartnerBetWithResponse(ctx, bet))(t)
		if again.Headers200 == nil || again.Headers200.IdempotentReplayed == nil || *again.Headers200.IdempotentReplayed != "true" {
			t.Errorf("the retry lacks Idempotent-Replayed: true: %+v", again.Headers200)
		}
		if !bytes.Equal(again.Body, first.Body) {
			t.Errorf("the replay's body differs:\n%s\n%s", again.Body, first.Body)
		}
		st := ok(p.PartnerUserStateWithResponse(ctx, user))(t)
		if len(st.JSON200.Positions) != 1 || st.JSON200.Positions[0].Shares != first.JSON200.SharesDelta {
			t.Errorf("after a retry the user holds %+v, want the shares of one bet (%d)", st.JSON200.Positions, first.JSON200.SharesDelta)
		}
	})
	t.Run("the state of the sub-account names the user as sent", func(t *testing.T) {
		st := ok(p.PartnerUserStateWithResponse(ctx, user))(t)
		if !st.JSON200.Exists || st.JSON200.ExternalUserID != user || st.JSON200.UserID != first.JSON200.UserID {
			t.Errorf("state: %+v", st.JSON200)
		}
	})
	t.Run("a sale pays the sub-account", func(t *testing.T) {
		s := ok(p.PartnerSellWithResponse(ctx, client.PartnerSellRequest{ExternalUserID: user, MarketID: w.marketID, Side: client.PartnerSellRequestSideYes, Shares: first.JSON200.SharesDelta / 2, ClientBetID: "sell-0001"}))(t)
		st := ok(p.PartnerUserStateWithResponse(ctx, user))(t)
		if s.JSON200.PayoutKopecks <= 0 || st.JSON200.BalanceKopecks != s.JSON200.PayoutKopecks {
			t.Errorf("sold for %d, the sub-account holds %d", s.JSON200.PayoutKopecks, st.JSON200.BalanceKopecks)
		}
	})

	refusals := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"a client_bet_id reused with other parameters is 409 IDEMPOTENCY_CONFLICT", func() error {
			other := bet
			other.AmountKopecks = 30_000
			_, err := client.Check(p.PartnerBetWithResponse(ctx, other))
			return err
		}, http.StatusConflict, "IDEMPOTENCY_CONFLICT"},
		{"a wrong key is 401 UNAUTHORIZED", func() error {
			_, err := client.Check(p.PartnerUserStateWithResponse(ctx, user, client.PartnerKey("pk_wrong")))
			return err
		}, http.StatusUnauthorized, "UNAUTHORIZED"},
		{"a sale of a side the user does not hold is 404 NO_ACCOUNT", func() error {
			_, err := client.Check(p.PartnerSellWithResponse(ctx, client.PartnerSellRequest{ExternalUserID: user, MarketID: w.marketID, Side: client.PartnerSellRequestSideNo, Shares: 10, ClientBetID: "sell-0002"}))
			return err
		}, http.StatusNotFound, "NO_ACCOUNT"},
		{"a bet whose guard is below the charge is 400 TRADE_FAILED", func() error {
			_, err := client.Check(p.PartnerBetWithResponse(ctx, client.PartnerBetRequest{ExternalUserID: user, MarketID: w.marketID, Side: client.PartnerBetRequestSideYes, AmountKopecks: 1000, MaxCostKopecks: ptr(int64(1)), ClientBetID: "bet-0002"}))
			return err
		}, http.StatusBadRequest, "TRADE_FAILED"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			e := refusal(t, c.call())
			if e.StatusCode != c.status || e.Code != c.code {
				t.Errorf("got %d %q %q, want %d %q", e.StatusCode, e.Code, e.Detail, c.status, c.code)
			}
		})
	}
}

func TestRateLimitedCallsSayWhenToRetry(t *testing.T) {
	ctx := context.Background()
	base := startServer(t, func(c *server.Config) { c.RateLogin = server.Rate{N: 1, Per: time.Hour} })
	c := newClient(t, base)
	login := client.LoginRequest{Email: "nobody@example.com", Password: "whatever it is"}
	if e := refusal(t, errOf(c.LoginWithResponse(ctx, login))); e.Code != "invalid_credentials" {
		t.Fatalf("the first log-in: %v", e)
	}
	e := refusal(t, errOf(c.LoginWithResponse(ctx, login)))
	if e.StatusCode != http.StatusTooManyRequests || e.Code != "rate_limited" || e.RetryAfter < time.Second {
		t.Errorf("the second log-in: %+v", e)
	}
}

func TestAPIErrorOfAnswersWithoutTheDocumentedBody(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		code       string
		retryAfter time.Duration
	}{
		{"a proxy's HTML page is named after its status", http.StatusBadGateway, map[string]string{"Content-Type": "text/html"}, "<h1>Bad Gateway</h1>", "bad_gateway", 0},
		{"an empty 503 with Retry-After in seconds", http.StatusServiceUnavailable, map[string]string{"Retry-After": "7"}, "", "service_unavailable", 7 * time.Second},
		{"a Retry-After that is not a number or a date is ignored", http.StatusTooManyRequests, map[string]string{"Retry-After": "soon"}, "", "too_many_requests", 0},
		{"the documented body wins over the status text", http.StatusServiceUnavailable, map[string]string{"Content-Type": "application/json", "Retry-After": "1"}, `{"error":"database_unavailable"}`, "database_unavailable", time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			defer srv.Close()
			e := refusal(t, errOf(newClient(t, srv.URL).HealthzWithResponse(context.Background())))
			if e.StatusCode != c.status || e.Code != c.code || e.RetryAfter != c.retryAfter {
				t.Errorf("got %+v, want %d %q retry after %v", e, c.status, c.code, c.retryAfter)
			}
		})
	}
	t.Run("a call that cannot reach the server passes its error on", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		err = errOf(newClient(t, "http://"+addr).HealthzWithResponse(context.Background()))
		var e *client.APIError
		if err == nil || errors.As(err, &e) {
			t.Errorf("got %v", err)
		}
	})
}
