package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of partners: creating and listing them, and their floats.

func adminCreatePartner(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	name := fs.String("name", "", "the partner's name (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if strings.TrimSpace(*name) == "" {
			return usagef("-name is required")
		}
		res, err := a.AdminCreatePartnerWithResponse(ctx, client.NewPartnerRequest{Name: *name})
		if err := a.check(res, err); err != nil {
			return err
		}
		p, err := shown(out, res.Body, res.JSON201)
		if p == nil {
			return err
		}
		if err := out.table([]string{"ID", "NAME", "KEY"}, []string{itoa(p.ID), p.Name, p.Key}); err != nil {
			return err
		}
		_, err = fmt.Fprintln(out.w, "\nThe key is shown this once (the server keeps only its hash): give it to the partner now.")
		return err
	}
}

func adminShowPartner(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("id", 0, "the partner's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("id", *id); err != nil {
			return err
		}
		res, err := a.AdminGetPartnerWithResponse(ctx, *id)
		if err := a.check(res, err); err != nil {
			return err
		}
		p, err := shown(out, res.Body, res.JSON200)
		if p == nil {
			return err
		}
		return out.table([]string{"ID", "NAME", "DISABLED", "FLOAT_KOPECKS", "FLOAT_RUB", "CREATED_AT"},
			[]string{itoa(p.ID), p.Name, yesNo(p.Disabled), itoa(p.FloatKopecks), rub(p.FloatKopecks), stamp(p.CreatedAt)})
	}
}

func adminPartners(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		res, err := a.AdminListPartnersWithResponse(ctx)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if len(r.Partners) == 0 {
			_, err := fmt.Fprintln(out.w, "No partners.")
			return err
		}
		rows := make([][]string, 0, len(r.Partners))
		for _, p := range r.Partners {
			rows = append(rows, []string{itoa(p.ID), p.Name, yesNo(p.Disabled), stamp(p.CreatedAt)})
		}
		return out.table([]string{"ID", "NAME", "DISABLED", "CREATED_AT"}, rows...)
	}
}

func adminFundFloat(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	amount := fs.Int64("amount", 0, "kopecks to add to the float (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		if err := needAmount(*amount); err != nil {
			return err
		}
		res, err := a.AdminFundPartnerFloatWithResponse(ctx, *id, client.FloatRequest{AmountKopecks: *amount})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		return out.table([]string{"PARTNER", "ADDED_KOPECKS", "FLOAT_KOPECKS", "FLOAT_RUB"},
			[]string{itoa(r.PartnerID), itoa(*amount), itoa(r.FloatKopecks), rub(r.FloatKopecks)})
	}
}
