package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/withdrawal"
)

// MetricsModule provides the Prometheus metrics (served at GET /metrics by
// HTTPModule) and the Auditor, which runs the ledger audit for the
// operator's GET /api/v1/admin/audit and, when Config.AuditInterval is
// set, periodically in the background, updating the predictkit_audit_*
// gauges each time.
var MetricsModule = fx.Module("metrics",
	fx.Provide(provideMetrics, newAuditor),
)

// Auditor runs the operator's audit: the ledger check merged with the
// markets' escrow check and the withdrawals' pending accounts' check.
type Auditor struct {
	accounts    *account.Service
	markets     *market.Service
	withdrawals *withdrawal.Service
	metrics     *Metrics
	log         *slog.Logger
}

type auditorParams struct {
	fx.In
	LC       fx.Lifecycle
	Config   Config
	Accounts *account.Service
	Markets  *market.Service
	Metrics  *Metrics
	// Withdrawals is optional: an app without the withdrawal module
	// audits the ledger and the escrows alone.
	Withdrawals *withdrawal.Service `optional:"true"`
	Logger      *slog.Logger
}

func newAuditor(p auditorParams) *Auditor {
	a := &Auditor{accounts: p.Accounts, markets: p.Markets, withdrawals: p.Withdrawals, metrics: p.Metrics, log: p.Logger}
	if every := p.Config.AuditInterval; every > 0 {
		var (
			stop = make(chan struct{})
			wg   sync.WaitGroup
		)
		p.LC.Append(fx.Hook{
			OnStart: func(context.Context) error {
				wg.Add(1)
				go func() {
					defer wg.Done()
					a.every(every, stop)
				}()
				return nil
			},
			OnStop: func(context.Context) error {
				close(stop)
				wg.Wait()
				return nil
			},
		})
	}
	return a
}

// Run audits once and records the outcome in the metrics.
func (a *Auditor) Run(ctx context.Context) (auditJSON, error) {
	start := time.Now()
	out, err := a.run(ctx)
	a.metrics.observeAudit(len(out.Problems), out.CheckedAt, time.Since(start), err)
	return out, err
}

func (a *Auditor) run(ctx context.Context) (auditJSON, error) {
	r, err := a.accounts.Audit(ctx)
	if err != nil {
		return auditJSON{}, err
	}
	escrow, err := a.markets.AuditEscrows(ctx)
	if err != nil {
		return auditJSON{}, err
	}
	var pending []string
	if a.withdrawals != nil {
		if pending, err = a.withdrawals.Audit(ctx); err != nil {
			return auditJSON{}, err
		}
	}
	out := auditJSON{Report: r, EscrowProblems: slices.Clone(escrow)}
	if out.EscrowProblems == nil {
		out.EscrowProblems = []string{}
	}
	out.Problems = slices.Concat(r.Problems, escrow, pending)
	if out.Problems == nil {
		out.Problems = []string{}
	}
	out.OK = len(out.Problems) == 0
	out.CheckedAt = r.CheckedAt.UTC()
	return out, nil
}

// every audits each interval until stop is closed, logging what it finds:
// DEBUG when sound, ERROR with the first problems otherwise (the metrics
// say it either way).
func (a *Auditor) every(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(interval, time.Minute))
		go func() { // a stop cancels an audit in progress
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		start := time.Now()
		out, err := a.Run(ctx)
		cancel()
		switch {
		case err != nil:
			a.log.Error("audit: failed", slog.String("error", err.Error()))
		case !out.OK:
			a.log.Error("audit: the ledger has problems", slog.Int("problems", len(out.Problems)),
				slog.Any("first", out.Problems[:min(len(out.Problems), 5)]), slog.Duration("duration", time.Since(start)))
		default:
			a.log.Debug("audit: ok", slog.Int64("accounts", out.Accounts), slog.Int64("postings", out.Postings),
				slog.Duration("duration", time.Since(start)))
		}
	}
}
