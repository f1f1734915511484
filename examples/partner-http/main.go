// Command partner-http is a partner's back office talking to a running
// predictkit server over HTTP with the Go client (package client), where
// examples/partner embeds the engine in process instead.
//
// It walks one of the partner's users through bet → retry → state → sell
// → state: the retry sends the same client_bet_id again, and the server
// answers with the first receipt and Idempotent-Replayed: true, having
// executed nothing.
//
// Against a fresh server (the memory store and its demo event), the
// operator token creates a partner and funds its float first:
//
//	PREDICTKIT_ADMIN_TOKEN=$(openssl rand -hex 32) go run ./cmd/predictkit &
//	go run ./examples/partner-http
//
// A partner runs it with the key the operator gave it (and no operator
// token), on a market of its choice:
//
//	PREDICTKIT_PARTNER_KEY=pk_... go run ./examples/partner-http -market 3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/client"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "partner-http:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	url, key, adminToken string
	market               int64
	user                 string
	amount               int64
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	c := config{url: getenv("PREDICTKIT_URL")}
	if c.url == "" {
		c.url = "http://127.0.0.1:8080"
	}
	fs := flag.NewFlagSet("partner-http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", c.url, "base URL of the server (env PREDICTKIT_URL)")
	// The secrets' defaults come from the environment after parsing, so
	// that -h never prints them.
	fs.StringVar(&c.key, "key", "", "the partner's key (env PREDICTKIT_PARTNER_KEY); without one, -admin-token creates a partner")
	fs.StringVar(&c.adminToken, "admin-token", "", "the operator's token (env PREDICTKIT_ADMIN_TOKEN), to create a partner and fund its float when there is no key")
	fs.Int64Var(&c.market, "market", 0, "the market to bet on (default: the first open market of the newest event)")
	fs.StringVar(&c.user, "user", "customer-42", "the partner's id for its user")
	fs.Int64Var(&c.amount, "amount", 20_000, "kopecks to bet, fee included")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.key == "" {
		c.key = getenv("PREDICTKIT_PARTNER_KEY")
	}
	if c.adminToken == "" {
		c.adminToken = getenv("PREDICTKIT_ADMIN_TOKEN")
	}
	if c.key == "" && c.adminToken == "" {
		return c, errors.New("give the partner's key (-key or PREDICTKIT_PARTNER_KEY), or the operator's token (-admin-token or PREDICTKIT_ADMIN_TOKEN) to create a partner")
	}
	if c.amount <= 0 {
		return c, errors.New("-amount must be a positive number of kopecks")
	}
	return c, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, w, stderr io.Writer) error {
	cfg, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	hc := client.WithHTTPClient(&http.Client{Timeout: 30 * time.Second})

	// The operator's part, when there is no key yet: a partner and its
	// float (1,000 RUB).
	var operator *client.ClientWithResponses
	partnerID := int64(0)
	if cfg.adminToken != "" {
		if operator, err = client.NewClientWithResponses(cfg.url, hc, client.WithBearerToken(cfg.adminToken)); err != nil {
			return err
		}
	}
	if cfg.key == "" {
		np, err := client.Check(operator.AdminCreatePartnerWithResponse(ctx, client.NewPartnerRequest{Name: "Example Bookmaker"}))
		if err != nil {
			return fmt.Errorf("create a partner: %w", err)
		}
		f, err := client.Check(operator.AdminFundPartnerFloatWithResponse(ctx, np.JSON201.ID, client.FloatRequest{AmountKopecks: 100_000}))
		if err != nil {
			return fmt.Errorf("fund the float: %w", err)
		}
		cfg.key, partnerID = np.JSON201.Key, np.JSON201.ID
		fmt.Fprintf(w, "partner: %d %q created, float %d kopecks; its key, shown once: %s\n", partnerID, np.JSON201.Name, f.JSON200.FloatKopecks, cfg.key)
	}

	// The partner's part: every request carries its key.
	c, err := client.NewClientWithResponses(cfg.url, hc, client.WithPartnerKey(cfg.key))
	if err != nil {
		return err
	}
	m, err := findMarket(ctx, c, cfg.market)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "market:  %d %q, YES at %.2f\n", m.ID, m.Name, m.YesProbability)

	// client_bet_id is the partner's idempotency key: unique per partner,
	// so each run of this program takes fresh ones.
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	bet := client.PartnerBetRequest{ExternalUserID: cfg.user, MarketID: m.ID, Side: client.PartnerBetRequestSideYes, AmountKopecks: cfg.amount, ClientBetID: "example-" + tag + "-bet"}
	first, err := client.Check(c.PartnerBetWithResponse(ctx, bet))
	if err != nil {
		return fmt.Errorf("bet: %w", err)
	}
	r := first.JSON200
	fmt.Fprintf(w, "bet:     %s %d shares for %d kopecks (client_bet_id %s)\n", r.Side, r.SharesDelta, r.CostKopecks, r.ClientBetID)

	// A retry after a timeout sends the very same request.
	again, err := client.Check(c.PartnerBetWithResponse(ctx, bet))
	if err != nil {
		return fmt.Errorf("retry: %w", err)
	}
	replayed := again.Headers200 != nil && again.Headers200.IdempotentReplayed != nil && *again.Headers200.IdempotentReplayed == "true"
	if !replayed || string(again.Body) != string(first.Body) {
		return errors.New("retry: the server executed the bet again instead of replaying it")
	}
	fmt.Fprintln(w, "retry:   Idempotent-Replayed: true, the same receipt, nothing executed")

	if err := printState(ctx, w, c, cfg.user); err != nil {
		return err
	}
	s, err := client.Check(c.PartnerSellWithResponse(ctx, client.PartnerSellRequest{
		ExternalUserID: cfg.user, MarketID: m.ID, Side: client.PartnerSellRequestSideYes,
		Shares: r.SharesDelta / 2, ClientBetID: "example-" + tag + "-sell",
	}))
	if err != nil {
		return fmt.Errorf("sell: %w", err)
	}
	fmt.Fprintf(w, "sell:    %s %d shares for %d kopecks, kept on the sub-account\n", s.JSON200.Side, -s.JSON200.SharesDelta, s.JSON200.PayoutKopecks)
	if err := printState(ctx, w, c, cfg.user); err != nil {
		return err
	}

	if partnerID != 0 {
		p, err := client.Check(operator.AdminGetPartnerWithResponse(ctx, partnerID))
		if err != nil {
			return fmt.Errorf("read the float: %w", err)
		}
		fmt.Fprintf(w, "float:   %d kopecks left\n", p.JSON200.FloatKopecks)
	}
	return nil
}

// findMarket returns market id, or with id 0 the first open market of the
// newest active event.
func findMarket(ctx context.Context, c *client.ClientWithResponses, id int64) (*client.Market, error) {
	if id != 0 {
		m, err := client.Check(c.GetMarketWithResponse(ctx, id))
		if err != nil {
			return nil, fmt.Errorf("market %d: %w", id, err)
		}
		return m.JSON200, nil
	}
	evs, err := client.Check(c.ListEventsWithResponse(ctx, nil))
	if err != nil {
		return nil, fmt.Errorf("list the events: %w", err)
	}
	for _, e := range evs.JSON200.Events {
		for _, p := range e.Pools {
			for _, m := range p.Markets {
				if !m.Resolved && !m.Paused {
					return &m, nil
				}
			}
		}
	}
	return nil, errors.New("no open market on the server: pass -market ID")
}

func printState(ctx context.Context, w io.Writer, c *client.ClientWithResponses, user string) error {
	res, err := client.Check(c.PartnerUserStateWithResponse(ctx, user))
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	st := res.JSON200
	fmt.Fprintf(w, "state:   exists=%v balance=%d open=%d", st.Exists, st.BalanceKopecks, st.OpenPositionsKopecks)
	for _, p := range st.Positions {
		fmt.Fprintf(w, " [market %d %s: %d shares at %d bps, worth %d]", p.MarketID, p.Side, p.Shares, p.AvgPriceBps, p.ValueKopecks)
	}
	fmt.Fprintln(w)
	return nil
}
