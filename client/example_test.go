package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/predictkit/predictkit/client"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

// A user registers and buys on a market over HTTP; the operator (admin
// token) makes them a creator and deposits money; a buy whose guard the
// price has passed comes back as an *APIError.
func Example() {
	base, stop := exampleServer("example-admin-token-0123456789")
	defer stop()
	ctx := context.Background()
	hc := client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second})

	c, err := client.NewClientWithResponses(base, hc)
	if err != nil {
		panic(err)
	}
	reg, err := client.Check(c.RegisterWithResponse(ctx, client.RegisterRequest{
		Email: "ann@example.com", Password: "correct horse battery", Name: "Ann",
	}))
	if err != nil {
		panic(err)
	}
	ann, annID := client.BearerToken(reg.JSON201.AccessToken), reg.JSON201.User.ID

	operator, err := client.NewClientWithResponses(base, hc, client.WithBearerToken("example-admin-token-0123456789"))
	if err != nil {
		panic(err)
	}
	creator := true
	if _, err := client.Check(operator.AdminSetRolesWithResponse(ctx, annID, client.RolesPatch{IsCreator: &creator})); err != nil {
		panic(err)
	}
	if _, err := client.Check(operator.AdminCreditWithResponse(ctx, annID, client.CreditRequest{AmountKopecks: 100_000})); err != nil {
		panic(err)
	}

	// Ann opens an event with one market at 50% and buys YES for 100 RUB.
	ev, err := client.Check(c.CreateEventWithResponse(ctx, client.NewEvent{Name: "Cup final", Pools: []client.NewPool{{
		Name: "Winner", LmsrBKopecks: 100_000, Margin: 0.02,
		Markets: []client.NewMarket{{Name: "Home team wins", Probability: 0.5}},
	}}}, ann))
	if err != nil {
		panic(err)
	}
	m := ev.JSON201.Pools[0].Markets[0]
	amount := int64(10_000)
	q, err := client.Check(c.QuoteWithResponse(ctx, m.ID, &client.QuoteParams{Side: client.QuoteParamsSideYES, AmountKopecks: &amount}))
	if err != nil {
		panic(err)
	}
	fmt.Printf("quote:  %d shares for %d kopecks\n", q.JSON200.Shares, *q.JSON200.CostKopecks)
	buy, err := client.Check(c.BuyWithResponse(ctx, m.ID, client.BuyRequest{Side: client.BuyRequestSideYES, AmountKopecks: amount}, ann))
	if err != nil {
		panic(err)
	}
	fmt.Printf("bought: %d shares for %d kopecks, balance %d, YES now %.2f\n",
		buy.JSON200.Shares, buy.JSON200.CostKopecks, buy.JSON200.Balance, buy.JSON200.Market.YesProbability)

	// The same buy, guarded by the old quote's shares: the price has moved.
	_, err = client.Check(c.BuyWithResponse(ctx, m.ID, client.BuyRequest{
		Side: client.BuyRequestSideYES, AmountKopecks: amount, MinShares: &q.JSON200.Shares,
	}, ann))
	var refused *client.APIError
	if errors.As(err, &refused) {
		fmt.Println("refused:", refused.StatusCode, refused.Code)
	}
	// Output:
	// quote:  18730 shares for 10000 kopecks
	// bought: 18730 shares for 10000 kopecks, balance 90000, YES now 0.55
	// refused: 409 price_moved
}

// exampleServer serves the API on the memory store at 127.0.0.1:0, as
// `predictkit serve` would with PREDICTKIT_ADMIN_TOKEN set.
func exampleServer(adminToken string) (base string, stop func()) {
	cfg := server.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Demo = false
	cfg.AdminToken = adminToken
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := server.Build(cfg)
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = app.Listener(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = app.Shutdown() }
}
