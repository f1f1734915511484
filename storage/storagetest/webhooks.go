package storagetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/webhook"
)

// bet places partner p's bet of amount kopecks on side for its user ext.
func (e *env) bet(p *partner.Partner, ext string, m *market.Market, side market.Side, amount int64) *partner.Receipt {
	e.t.Helper()
	userSeq++
	rc, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: ext, MarketID: m.ID, Side: side, AmountKopecks: amount,
		ClientBetID: fmt.Sprintf("bet-%d", userSeq)})
	if err != nil {
		e.t.Fatalf("bet of %s: %v", ext, err)
	}
	return rc
}

// dispatch queues the deliveries of everything in the change log.
func (e *env) dispatch() {
	e.t.Helper()
	for {
		n, err := e.stores.Webhooks.DispatchWebhooks(e.ctx, time.Now(), 2, webhook.DefaultWindow)
		if err != nil {
			e.t.Fatal(err)
		}
		if n < 2 {
			return
		}
	}
}

// log returns every delivery of partner id, oldest first.
func (e *env) log(id int64) []*webhook.Delivery {
	e.t.Helper()
	ds, err := e.stores.Webhooks.Deliveries(e.ctx, id, 0, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
		ds[i], ds[j] = ds[j], ds[i]
	}
	return ds
}

func (e *env) hook(p *partner.Partner) {
	e.t.Helper()
	if err := e.stores.Webhooks.SetWebhook(e.ctx, &webhook.Hook{PartnerID: p.ID, URL: "https://hooks.example.com/" + p.Name, Secret: "whsec_" + p.Name}); err != nil {
		e.t.Fatal(err)
	}
}

func testWebhooks(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Webhooks == nil {
		t.Skip("this store has no webhook store")
	}
	t.Run("a webhook is set, read, replaced and removed; an unknown partner has none", func(t *testing.T) {
		e := newEnv(t, newStores)
		p := e.partner("Bookie", 0)
		w := e.stores.Webhooks
		if _, err := w.Webhook(e.ctx, p.ID); !errors.Is(err, webhook.ErrNoWebhook) {
			t.Fatalf("no webhook yet: %v", err)
		}
		if err := w.SetWebhook(e.ctx, &webhook.Hook{PartnerID: 987654, URL: "https://x.example", Secret: "s"}); !errors.Is(err, partner.ErrNotFound) {
			t.Fatalf("unknown partner: %v", err)
		}
		for _, u := range []string{"https://a.example/1", "https://b.example/2"} {
			h := &webhook.Hook{PartnerID: p.ID, URL: u, Secret: "whsec_" + u}
			if err := w.SetWebhook(e.ctx, h); err != nil || h.CreatedAt.IsZero() {
				t.Fatalf("set %s: %v", u, err)
			}
			got, err := w.Webhook(e.ctx, p.ID)
			if err != nil || got.URL != u || got.Secret != "whsec_"+u {
				t.Fatalf("read back %+v, %v; want %s with its secret", got, err, u)
			}
		}
		if err := w.DeleteWebhook(e.ctx, p.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := w.DeleteWebhook(e.ctx, p.ID, time.Now()); !errors.Is(err, webhook.ErrNoWebhook) {
			t.Fatalf("removing it twice: %v", err)
		}
	})

	t.Run("a resolution queues, once, a market.resolved and a bet.settled per position for each partner with a webhook", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		a, b, c := e.partner("A", 1_000_000), e.partner("B", 1_000_000), e.partner("C", 1_000_000)
		e.hook(a)
		e.hook(c)
		e.dispatch() // what came before matters not
		yes := e.bet(a, "alice", m, market.Yes, 5000)
		no := e.bet(a, "bob", m, market.No, 3000)
		e.bet(b, "carol", m, market.Yes, 2000)
		e.bet(a, "alice", m, market.Yes, 1000) // the same position grows
		u := e.user("plain", 50000, 0)
		if _, err := e.buy(u, m, market.Yes, 1000); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Resolve(e.ctx, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		e.dispatch()
		e.dispatch()
		got := e.log(a.ID)
		if len(got) != 3 {
			t.Fatalf("partner A has %d deliveries, want 3: %+v", len(got), got)
		}
		if d := got[0]; d.Type != webhook.MarketResolved || d.MarketID != m.ID || d.WonSide != market.WonSideYes || d.Status != webhook.Pending {
			t.Errorf("first delivery %+v: want the market.resolved, pending", d)
		}
		want := map[string]struct {
			side           market.Side
			shares, payout int64
		}{
			"alice": {market.Yes, yes.SharesDelta, 0},
			"bob":   {market.No, no.SharesDelta, 0},
		}
		for _, d := range got[1:] {
			w, ok := want[d.ExternalUserID]
			if d.Type != webhook.BetSettled || !ok || d.Side != w.side || d.MarketID != m.ID || d.PositionID == 0 {
				t.Errorf("delivery %+v: want a bet.settled of alice or bob", d)
				continue
			}
			if d.ExternalUserID == "alice" && (d.Shares <= yes.SharesDelta || d.PayoutKopecks != d.Shares) {
				t.Errorf("alice's delivery %+v: want her two bets' shares, paid a kopeck a share", d)
			}
			if d.ExternalUserID == "bob" && (d.Shares != w.shares || d.PayoutKopecks != 0) {
				t.Errorf("bob's delivery %+v: want %d shares paid nothing", d, w.shares)
			}
			body := string(webhook.Body(d))
			if d.ExternalUserID == "bob" && body != fmt.Sprintf(`{"id":%d,"type":"bet.settled","created_at":"%s","data":{"external_user_id":"bob","market_id":%d,"side":"no","shares":%d,"payout_kopecks":0,"won_side":"yes"}}`,
				d.ID, d.CreatedAt.UTC().Format(time.RFC3339Nano), m.ID, w.shares) {
				t.Errorf("bob's body: %s", body)
			}
		}
		if n := len(e.log(b.ID)); n != 0 {
			t.Errorf("partner B, without a webhook, has %d deliveries", n)
		}
		if n := len(e.log(c.ID)); n != 0 {
			t.Errorf("partner C, without positions, has %d deliveries", n)
		}
	})

	t.Run("a void settles each position with its net cost back", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		a := e.partner("A", 1_000_000)
		e.hook(a)
		e.dispatch()
		rc := e.bet(a, "alice", m, market.No, 4000)
		if err := e.markets.Resolve(e.ctx, m.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		e.dispatch()
		got := e.log(a.ID)
		if len(got) != 2 || got[1].Type != webhook.BetSettled || got[1].PayoutKopecks != rc.CostKopecks || got[1].WonSide != market.WonSideVoid {
			t.Fatalf("deliveries %+v: want a market.resolved and alice's bet.settled paid back %d", got, rc.CostKopecks)
		}
		if b := string(webhook.Body(got[0])); b != fmt.Sprintf(`{"id":%d,"type":"market.resolved","created_at":"%s","data":{"market_id":%d,"event_id":%d,"won_side":"void"}}`,
			got[0].ID, got[0].CreatedAt.UTC().Format(time.RFC3339Nano), m.ID, m.EventID) {
			t.Errorf("market.resolved body: %s", b)
		}
	})

	t.Run("claims take due deliveries once, attempts are recorded, a redelivery makes one due again", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		a := e.partner("A", 1_000_000)
		e.hook(a)
		e.dispatch()
		e.bet(a, "alice", m, market.Yes, 4000)
		e.bet(a, "bob", m, market.Yes, 4000)
		if err := e.markets.Resolve(e.ctx, m.ID, "NO"); err != nil {
			t.Fatal(err)
		}
		e.dispatch()
		w := e.stores.Webhooks
		now := time.Now().Add(time.Second).UTC().Truncate(time.Microsecond)
		if ps, err := w.DuePartners(e.ctx, now); err != nil || len(ps) != 1 || ps[0] != a.ID {
			t.Fatalf("due partners %v, %v; want [%d]", ps, err, a.ID)
		}
		if q, err := w.WebhookQueue(e.ctx, now); err != nil || q.Pending != 3 || q.Due != 3 || q.OldestDue.IsZero() {
			t.Fatalf("queue %+v, %v: want 3 pending, 3 due", q, err)
		}
		lease := now.Add(time.Minute)
		first, err := w.ClaimDeliveries(e.ctx, a.ID, now, lease, 2)
		if err != nil || len(first) != 2 || first[0].URL != "https://hooks.example.com/A" || first[0].Secret != "whsec_A" || first[0].Attempts != 1 {
			t.Fatalf("first claim %+v, %v: want 2 with the webhook's URL and secret", first, err)
		}
		second, err := w.ClaimDeliveries(e.ctx, a.ID, now, lease, 2)
		if err != nil || len(second) != 1 || second[0].ID == first[0].ID || second[0].ID == first[1].ID {
			t.Fatalf("second claim %+v, %v: want the one left", second, err)
		}
		if again, err := w.ClaimDeliveries(e.ctx, a.ID, now, lease, 5); err != nil || len(again) != 0 {
			t.Fatalf("a claim during the leases took %d, %v", len(again), err)
		}
		// The first is answered 500, then (after its lease) claimed again
		// by someone else: the first claimer's late record changes nothing.
		d := first[0]
		retry := now.Add(30 * time.Second)
		if err := w.RecordAttempt(e.ctx, webhook.Attempt{ID: d.ID, Attempts: 1, At: now, StatusCode: 500, Error: "answered 500", Latency: 12 * time.Millisecond, Status: webhook.Pending, NextAttemptAt: retry}); err != nil {
			t.Fatal(err)
		}
		re, err := w.ClaimDeliveries(e.ctx, a.ID, retry, retry.Add(time.Minute), 1)
		if err != nil || len(re) != 1 || re[0].ID != d.ID || re[0].Attempts != 2 {
			t.Fatalf("claim at the retry: %+v, %v; want delivery %d, attempt 2", re, err, d.ID)
		}
		if err := w.RecordAttempt(e.ctx, webhook.Attempt{ID: d.ID, Attempts: 1, At: retry, StatusCode: 200, Status: webhook.Delivered}); err != nil {
			t.Fatal(err)
		}
		if err := w.RecordAttempt(e.ctx, webhook.Attempt{ID: d.ID, Attempts: 2, At: retry, StatusCode: 204, Latency: time.Millisecond, Status: webhook.Delivered}); err != nil {
			t.Fatal(err)
		}
		if err := w.RecordAttempt(e.ctx, webhook.Attempt{ID: first[1].ID, Attempts: 1, At: now, Error: "no answer within 10s", Status: webhook.Failed}); err != nil {
			t.Fatal(err)
		}
		byID := map[int64]*webhook.Delivery{}
		for _, x := range e.log(a.ID) {
			byID[x.ID] = x
		}
		if x := byID[d.ID]; x.Status != webhook.Delivered || x.Attempts != 2 || x.LastStatusCode != 204 || x.DeliveredAt == nil || x.LastError != "" {
			t.Errorf("the delivered one: %+v", x)
		}
		if x := byID[first[1].ID]; x.Status != webhook.Failed || x.LastError != "no answer within 10s" || x.LastStatusCode != 0 {
			t.Errorf("the failed one: %+v", x)
		}
		if err := w.Redeliver(e.ctx, a.ID, first[1].ID, retry, retry.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := w.Redeliver(e.ctx, a.ID, 1<<40, retry, retry); !errors.Is(err, webhook.ErrDeliveryNotFound) {
			t.Errorf("redelivering an unknown id: %v", err)
		}
		if err := w.Redeliver(e.ctx, a.ID+1, first[1].ID, retry, retry); !errors.Is(err, webhook.ErrDeliveryNotFound) {
			t.Errorf("redelivering another partner's delivery: %v", err)
		}
		again, err := w.ClaimDeliveries(e.ctx, a.ID, retry, retry.Add(time.Minute), 5)
		if err != nil || len(again) != 1 || again[0].ID != first[1].ID || again[0].Attempts != 2 {
			t.Fatalf("claim after the redelivery: %+v, %v", again, err)
		}
		page, err := w.Deliveries(e.ctx, a.ID, 0, 2)
		if err != nil || len(page) != 2 || page[0].ID <= page[1].ID {
			t.Fatalf("first page %+v, %v: want the 2 newest, newest first", page, err)
		}
		rest, err := w.Deliveries(e.ctx, a.ID, page[1].ID, 2)
		if err != nil || len(rest) != 1 || rest[0].ID >= page[1].ID {
			t.Fatalf("next page %+v, %v: want the oldest", rest, err)
		}
		if err := w.DeleteWebhook(e.ctx, a.ID, retry); err != nil {
			t.Fatal(err)
		}
		for _, x := range e.log(a.ID) {
			if x.Status == webhook.Pending {
				t.Errorf("delivery %d still pending once the webhook is gone", x.ID)
			}
		}
		if ps, err := w.DuePartners(e.ctx, retry.Add(time.Hour)); err != nil || len(ps) != 0 {
			t.Errorf("due partners once the webhook is gone: %v, %v", ps, err)
		}
	})
}

func testKeyRotation(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Partners == nil {
		t.Skip("this store has no partner store")
	}
	t.Run("a rotated key works until its grace ends; a second rotation ends the first old key", func(t *testing.T) {
		e := newEnv(t, newStores)
		clock := time.Now().UTC().Truncate(time.Microsecond)
		e.partners.Now = func() time.Time { return clock }
		p, k0, err := e.partners.CreatePartner(e.ctx, "Rotating")
		if err != nil {
			t.Fatal(err)
		}
		k1, err := e.partners.RotateKey(e.ctx, p.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{k0, k1} {
			if got, err := e.partners.Authenticate(e.ctx, k); err != nil || got.ID != p.ID {
				t.Fatalf("during the grace: %v", err)
			}
		}
		clock = clock.Add(time.Hour)
		if _, err := e.partners.Authenticate(e.ctx, k0); !errors.Is(err, partner.ErrUnauthorized) {
			t.Fatalf("the old key after the grace: %v", err)
		}
		if _, err := e.partners.Authenticate(e.ctx, k1); err != nil {
			t.Fatalf("the new key after the grace: %v", err)
		}
		k2, err := e.partners.RotateKey(e.ctx, p.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		k3, err := e.partners.RotateKey(e.ctx, p.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{k0, k1, k2} {
			if _, err := e.partners.Authenticate(e.ctx, k); !errors.Is(err, partner.ErrUnauthorized) {
				t.Errorf("a replaced key still authenticates: %v", err)
			}
		}
		if _, err := e.partners.Authenticate(e.ctx, k3); err != nil {
			t.Errorf("the newest key: %v", err)
		}
		if _, err := e.partners.RotateKey(e.ctx, 987654, 0); !errors.Is(err, partner.ErrNotFound) {
			t.Errorf("rotating an unknown partner's key: %v", err)
		}
		for _, g := range []time.Duration{-time.Second, partner.MaxKeyGrace + time.Second} {
			if _, err := e.partners.RotateKey(e.ctx, p.ID, g); err == nil {
				t.Errorf("a grace of %s was accepted", g)
			}
		}
	})
}
