package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of partner webhooks and key rotation.

func adminSetWebhook(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	u := fs.String("webhook-url", "", "the http or https URL deliveries are POSTed to (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		if *u == "" {
			return usagef("-webhook-url is required")
		}
		res, err := a.AdminSetPartnerWebhookWithResponse(ctx, *id, client.WebhookRequest{URL: *u})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if err := out.table([]string{"PARTNER", "URL", "SECRET"}, []string{itoa(*id), r.URL, r.Secret}); err != nil {
			return err
		}
		_, err = fmt.Fprintln(out.w, "\nThe secret signs every delivery (Predictkit-Signature); it is shown this once.")
		return err
	}
}

func adminShowWebhook(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		res, err := a.AdminGetPartnerWebhookWithResponse(ctx, *id)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		return out.table([]string{"PARTNER", "URL", "SET_AT"}, []string{itoa(*id), r.URL, stamp(r.CreatedAt)})
	}
}

func adminDeleteWebhook(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		res, err := a.AdminDeletePartnerWebhookWithResponse(ctx, *id)
		if err := a.check(res, err); err != nil {
			return err
		}
		if out.json {
			_, err := fmt.Fprintln(out.w, `{"status":"deleted"}`)
			return err
		}
		_, err = fmt.Fprintf(out.w, "Webhook of partner %d removed; its pending deliveries are marked failed.\n", *id)
		return err
	}
}

func adminDeliveries(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	limit := fs.Int("limit", 0, "deliveries per page, 1 to 100 (default: the server's, 50)")
	cursor := fs.String("cursor", "", "the cursor a previous page printed, for the page after it")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		if *limit < 0 {
			return usagef("-limit must be positive")
		}
		params := &client.AdminListPartnerDeliveriesParams{}
		if *limit > 0 {
			l := strconv.Itoa(*limit)
			params.Limit = &l
		}
		if *cursor != "" {
			params.Cursor = cursor
		}
		res, err := a.AdminListPartnerDeliveriesWithResponse(ctx, *id, params)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if len(r.Deliveries) == 0 {
			_, err := fmt.Fprintln(out.w, "No deliveries.")
			return err
		}
		rows := make([][]string, 0, len(r.Deliveries))
		for _, d := range r.Deliveries {
			next, code, last := "-", "-", "-"
			if d.NextAttemptAt != nil {
				next = stamp(*d.NextAttemptAt)
			}
			if d.LastStatusCode != nil {
				code = strconv.Itoa(*d.LastStatusCode)
			}
			if d.LastError != nil {
				last = *d.LastError
			}
			rows = append(rows, []string{itoa(d.ID), string(d.Type), string(d.Status), strconv.Itoa(d.Attempts), next, code, last, stamp(d.CreatedAt)})
		}
		if err := out.table([]string{"ID", "TYPE", "STATUS", "ATTEMPTS", "NEXT_ATTEMPT", "LAST_STATUS", "LAST_ERROR", "CREATED_AT"}, rows...); err != nil {
			return err
		}
		if r.NextCursor != nil {
			next := "predictkit admin deliveries -partner " + itoa(*id)
			if *limit > 0 {
				next += " -limit " + strconv.Itoa(*limit)
			}
			_, err = fmt.Fprintf(out.w, "\nMore deliveries: %s -cursor %s\n", next, *r.NextCursor)
		}
		return err
	}
}

func adminRedeliver(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	delivery := fs.Int64("delivery", 0, "the delivery's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		if err := needID("delivery", *delivery); err != nil {
			return err
		}
		res, err := a.AdminRedeliverPartnerDeliveryWithResponse(ctx, *id, itoa(*delivery))
		if err := a.check(res, err); err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(res.Body)
		}
		_, err = fmt.Fprintf(out.w, "Delivery %d queued: it is sent again now, and retried for 24h if it fails.\n", *delivery)
		return err
	}
}

func adminRotateKey(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	grace := fs.Duration("grace", 24*time.Hour, "how long the old key keeps working (0 ends it at once; at most 720h)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		if *grace < 0 || *grace%time.Second != 0 {
			return usagef("-grace must be a whole number of seconds, 0 or more, such as 24h")
		}
		secs := int64(*grace / time.Second)
		res, err := a.AdminRotatePartnerKeyWithResponse(ctx, *id, client.RotateKeyRequest{GraceSeconds: &secs})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if err := out.table([]string{"PARTNER", "KEY", "OLD_KEY_WORKS_FOR"}, []string{itoa(*id), r.Key, grace.String()}); err != nil {
			return err
		}
		_, err = fmt.Fprintln(out.w, "\nThe new key is shown this once.")
		return err
	}
}
