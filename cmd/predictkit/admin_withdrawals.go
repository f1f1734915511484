package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of withdrawals: the queue, and recording a payout
// made from a wallet outside the server, or a rejection. The server holds
// no keys, so paying is the operator's; these commands only record it.

func adminWithdrawals(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	status := fs.String("status", "pending", "pending (the queue, oldest first), paid, rejected, cancelled or all (newest first)")
	limit := fs.Int("limit", 0, "withdrawals per page, 1 to 100 (default: the server's, 50)")
	cursor := fs.String("cursor", "", "the cursor a previous page printed, for the page after it")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		st := client.AdminListWithdrawalsParamsStatus(*status)
		if !st.Valid() {
			return usagef("-status %q: must be pending, paid, rejected, cancelled or all", *status)
		}
		if *limit < 0 {
			return usagef("-limit must be positive")
		}
		params := &client.AdminListWithdrawalsParams{Status: &st}
		if *limit > 0 {
			params.Limit = limit
		}
		if *cursor != "" {
			params.Cursor = cursor
		}
		res, err := a.AdminListWithdrawalsWithResponse(ctx, params)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if len(r.Withdrawals) == 0 {
			_, err := fmt.Fprintf(out.w, "No %s withdrawals.\n", strings.TrimPrefix(*status, "all"))
			return err
		}
		rows := make([][]string, 0, len(r.Withdrawals))
		for _, w := range r.Withdrawals {
			settled := "-"
			switch {
			case w.TxHash != nil:
				settled = *w.TxHash
			case w.Reason != nil:
				settled = *w.Reason
			}
			rows = append(rows, []string{itoa(w.ID), fmt.Sprintf("%d %s", w.User.ID, w.User.Email), string(w.Chain), w.Address,
				itoa(w.AmountKopecks), string(w.Status), stamp(w.CreatedAt), settled})
		}
		if err := out.table([]string{"ID", "USER", "CHAIN", "ADDRESS", "AMOUNT", "STATUS", "CREATED_AT", "TX_HASH/REASON"}, rows...); err != nil {
			return err
		}
		if r.NextCursor != nil {
			next := "predictkit admin withdrawals -status " + *status
			if *limit > 0 {
				next += " -limit " + strconv.Itoa(*limit)
			}
			fmt.Fprintf(out.w, "\nNext page: %s -cursor %s\n", next, *r.NextCursor)
		}
		return nil
	}
}

func adminApproveWithdrawal(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	tx := fs.String("tx", "", "the payout's transaction hash: 0x and 64 hexadecimal digits on EVM chains, 64 digits on TRON (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		id, err := withdrawalID(a.arg)
		if err != nil {
			return err
		}
		if *tx == "" {
			return usagef("-tx: the payout's transaction hash is required (pay from your wallet first)")
		}
		res, err := a.AdminApproveWithdrawalWithResponse(ctx, id, client.AdminApproveWithdrawalJSONRequestBody{TxHash: *tx})
		if err := a.check(res, err); err != nil {
			return err
		}
		w, err := shown(out, res.Body, res.JSON200)
		if w == nil {
			return err
		}
		return printWithdrawal(out, w)
	}
}

func adminRejectWithdrawal(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	reason := fs.String("reason", "", "why, 1 to 500 characters; the user reads it (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		id, err := withdrawalID(a.arg)
		if err != nil {
			return err
		}
		if strings.TrimSpace(*reason) == "" {
			return usagef("-reason: the user is told why; it is required")
		}
		res, err := a.AdminRejectWithdrawalWithResponse(ctx, id, client.AdminRejectWithdrawalJSONRequestBody{Reason: *reason})
		if err := a.check(res, err); err != nil {
			return err
		}
		w, err := shown(out, res.Body, res.JSON200)
		if w == nil {
			return err
		}
		return printWithdrawal(out, w)
	}
}

func withdrawalID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a withdrawal id (a positive number)", arg)
	}
	return id, nil
}

func printWithdrawal(out *adminOutput, w *client.Withdrawal) error {
	settled, decided := "-", "-"
	switch {
	case w.TxHash != nil:
		settled = *w.TxHash
	case w.Reason != nil:
		settled = *w.Reason
	}
	if w.DecidedAt != nil {
		decided = stamp(*w.DecidedAt)
	}
	return out.table([]string{"ID", "USER", "CHAIN", "ADDRESS", "AMOUNT", "STATUS", "DECIDED_AT", "TX_HASH/REASON"},
		[]string{itoa(w.ID), itoa(w.UserID), string(w.Chain), w.Address, itoa(w.AmountKopecks), string(w.Status), decided, settled})
}
