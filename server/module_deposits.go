package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/wallet"
)

// DepositsModule watches the chains of Config.Chains for token deposits
// to users' addresses and credits them (package deposit): one watcher
// per chain, run in the background; on PostgreSQL each chain's watcher
// runs under an exclusive lock, so that among the instances one at a
// time reads a chain. It serves GET /api/v1/users/me/deposits, and
// reports each watcher on /readyz and in the metrics.
var DepositsModule = fx.Module("deposits",
	fx.Provide(newDepositWatchers, depositRoutes),
	fx.Invoke(runDeposits),
)

// DepositWatchers are the server's chain watchers, in Config.Chains'
// order (none when no chain is watched).
type DepositWatchers struct {
	watchers []*deposit.Watcher
	nodes    []*deposit.RPC
}

// Statuses returns each watcher's state.
func (d *DepositWatchers) Statuses() []deposit.Status {
	out := make([]deposit.Status, 0, len(d.watchers))
	for _, w := range d.watchers {
		out = append(out, w.Status())
	}
	return out
}

func newDepositWatchers(cfg Config, store Store, metrics *Metrics, log *slog.Logger) (*DepositWatchers, error) {
	d := &DepositWatchers{}
	if len(cfg.Chains) == 0 {
		return d, nil
	}
	book, ok := store.(deposit.AddressBook)
	if !ok {
		return nil, errors.New("deposits: PREDICTKIT_CHAINS is set but the store cannot find users by their addresses")
	}
	for _, name := range cfg.Chains {
		cc := cfg.ChainSettings.Of(name)
		if cc == nil {
			return nil, fmt.Errorf("deposits: unknown chain %q", name)
		}
		token, err := wallet.Parse(name, cc.Token)
		if err != nil {
			return nil, fmt.Errorf("deposits: %s token: %w", name, err)
		}
		node := deposit.NewRPC(cc.RPCURL)
		w, err := deposit.New(deposit.Config{Chain: name, Token: token, Decimals: cc.Decimals,
			Confirmations: cc.Confirmations, KopecksPerToken: cc.KopecksPerToken, Start: cc.StartBlock, MaxRange: cc.LogRange, Poll: cc.Poll,
			Logger: log}, node, store, book)
		if err != nil {
			return nil, err
		}
		d.watchers, d.nodes = append(d.watchers, w), append(d.nodes, node)
	}
	if metrics != nil {
		metrics.reg.MustRegister(depositCollector{d})
	}
	return d, nil
}

// exclusiveStore is a store that runs a job in one instance at a time
// (storage/postgres).
type exclusiveStore interface {
	Exclusive(ctx context.Context, name string, run func(context.Context) error) error
}

// runDeposits runs the watchers while the server runs.
func runDeposits(lc fx.Lifecycle, store Store, d *DepositWatchers, log *slog.Logger) {
	if len(d.watchers) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			for _, w := range d.watchers {
				wg.Go(func() { watchChain(ctx, store, w, log) })
			}
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			for _, n := range d.nodes {
				n.Close()
			}
			return nil
		},
	})
}

// watchChain runs w until ctx is done: under the chain's exclusive lock
// when the store has one, taken again after it was lost.
func watchChain(ctx context.Context, store Store, w *deposit.Watcher, log *slog.Logger) {
	ex, ok := store.(exclusiveStore)
	if !ok {
		_ = w.Run(ctx)
		return
	}
	name := "deposits:" + w.Status().Chain
	for {
		err := ex.Exclusive(ctx, name, w.Run)
		if ctx.Err() != nil {
			return
		}
		log.Warn("deposits: the chain's lock was lost; taking it again", "lock", name, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// depositRoutes lists the deposits' routes.
func depositRoutes(store Store, auth *Auth) RoutesOut {
	h := &depositHandlers{store: store, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/users/me/deposits", Errors: errsUserDeposits, Handler: h.handleUserDeposits},
	}}
}

type depositHandlers struct {
	store deposit.Store
	auth  *Auth
}

// GET /users/me/deposits: the caller's deposits, newest first, a keyset
// page at a time. Checks run 401, 400 invalid_request (limit not an
// integer from 1 to 100, a cursor that is not a deposit id).
var errsUserDeposits = table("internal_error", unauthorized)

// handleUserDeposits answers a page of the caller's deposits.
func (h *depositHandlers) handleUserDeposits(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", deposit.DefaultLimit)
	if err != nil || limit < 1 || limit > deposit.MaxLimit {
		return badRequest("limit", "must be an integer from 1 to "+strconv.Itoa(deposit.MaxLimit))
	}
	before, err := queryInt(c, "cursor", 0)
	if err != nil {
		return badRequest("cursor", "must be the next_cursor of an earlier page")
	}
	ds, err := h.store.UserDeposits(c.UserContext(), u.ID, int(limit)+1, before)
	if err != nil {
		return err
	}
	var next *string
	if len(ds) > int(limit) {
		ds = ds[:limit]
		s := strconv.FormatInt(ds[len(ds)-1].ID, 10)
		next = &s
	}
	views := make([]deposit.View, 0, len(ds))
	for i := range ds {
		views = append(views, ds[i].View())
	}
	return c.JSON(fiber.Map{"deposits": views, "next_cursor": next})
}

// depositCollector exports each watcher's state at every scrape.
type depositCollector struct{ d *DepositWatchers }

var depositDescs = struct {
	up, active, head, next, lag, since, credited, failures *prometheus.Desc
}{
	up:       prometheus.NewDesc("predictkit_deposit_watcher_up", "1 when the chain's watcher's last pass succeeded, 0 while its node is down or answers garbage (it backs off and credits nothing meanwhile).", []string{"chain"}, nil),
	active:   prometheus.NewDesc("predictkit_deposit_watcher_active", "1 when the chain's watcher runs in this instance (one instance at a time holds each chain).", []string{"chain"}, nil),
	head:     prometheus.NewDesc("predictkit_deposit_head_block", "The chain's head block at the watcher's last successful pass.", []string{"chain"}, nil),
	next:     prometheus.NewDesc("predictkit_deposit_next_block", "The next block the chain's watcher reads.", []string{"chain"}, nil),
	lag:      prometheus.NewDesc("predictkit_deposit_lag_blocks", "Blocks the chain's watcher has yet to read.", []string{"chain"}, nil),
	since:    prometheus.NewDesc("predictkit_deposit_watcher_state_since_timestamp_seconds", "Unix time since when the chain's watcher has been up (or down).", []string{"chain"}, nil),
	credited: prometheus.NewDesc("predictkit_deposits_credited_total", "Deposits this instance credited, by chain.", []string{"chain"}, nil),
	failures: prometheus.NewDesc("predictkit_deposit_watcher_failures_total", "Failed passes over the chain (node down, garbage, store errors).", []string{"chain"}, nil),
}

func (c depositCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{depositDescs.up, depositDescs.active, depositDescs.head, depositDescs.next,
		depositDescs.lag, depositDescs.since, depositDescs.credited, depositDescs.failures} {
		ch <- d
	}
}

func (c depositCollector) Collect(ch chan<- prometheus.Metric) {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, s := range c.d.Statuses() {
		ch <- prometheus.MustNewConstMetric(depositDescs.up, prometheus.GaugeValue, b(s.OK), s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.active, prometheus.GaugeValue, b(s.Active), s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.head, prometheus.GaugeValue, float64(s.Head), s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.next, prometheus.GaugeValue, float64(s.Next), s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.lag, prometheus.GaugeValue, float64(s.Lag), s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.since, prometheus.GaugeValue, float64(s.Since.UnixNano())/1e9, s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.credited, prometheus.CounterValue, float64(s.Credited), s.Chain)
		ch <- prometheus.MustNewConstMetric(depositDescs.failures, prometheus.CounterValue, float64(s.Failures), s.Chain)
	}
}
