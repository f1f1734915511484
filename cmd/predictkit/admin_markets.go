package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of markets and the ledger: resolving any market, and
// the ledger audit.

func adminAudit(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		res, err := a.AdminAuditWithResponse(ctx)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := decoded(res.JSON200)
		if err != nil {
			return err
		}
		if out.json {
			err = out.rawJSON(res.Body)
		} else {
			err = out.table([]string{"OK", "SUM", "ACCOUNTS", "POSTINGS", "PROBLEMS", "CHECKED_AT"},
				[]string{yesNo(r.OK), itoa(r.Sum), itoa(r.Accounts), itoa(r.Postings), strconv.Itoa(len(r.Problems)), stamp(r.CheckedAt)})
			if err == nil && len(r.Problems) > 0 {
				fmt.Fprintln(out.w, "\nProblems:")
				for _, p := range r.Problems {
					fmt.Fprintf(out.w, "  %s\n", p)
				}
			}
		}
		if err != nil {
			return err
		}
		if !r.OK {
			return fmt.Errorf("the audit found %d problems", len(r.Problems))
		}
		return nil
	}
}

func adminResolve(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("market", 0, "the market's id (required)")
	won := fs.String("won", "", "the outcome: YES, NO or VOID (refund every open position its net cost) (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("market", *id); err != nil {
			return err
		}
		side := client.ResolveRequestWonSide(strings.ToUpper(*won))
		if !side.Valid() {
			return usagef("-won %q: must be YES, NO or VOID", *won)
		}
		res, err := a.AdminResolveMarketWithResponse(ctx, *id, client.ResolveRequest{WonSide: side})
		if err := a.check(res, err); err != nil {
			return err
		}
		// The resolution answers only {"status":"ok"}; the market says
		// how and by whom it resolved.
		m, err := a.GetMarketWithResponse(ctx, *id)
		if err := a.check(m, err); err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(m.Body)
		}
		v, err := decoded(m.JSON200)
		if err != nil {
			return err
		}
		outcome, by, at := "-", "-", "-"
		if v.WinningOutcome != nil {
			outcome = string(*v.WinningOutcome)
		}
		if v.ResolvedBy != nil {
			by = string(*v.ResolvedBy)
		}
		if v.ResolvedAt != nil {
			at = stamp(*v.ResolvedAt)
		}
		return out.table([]string{"MARKET", "OUTCOME", "RESOLVED_BY", "RESOLVED_AT"}, []string{itoa(v.ID), outcome, by, at})
	}
}
