package storagetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
)

// ChangeLog is what a store offers of its change log: the entries every
// change writes in its own transaction, in commit order.
type ChangeLog interface {
	changelog.Reader
	// ChangeFeed follows the log as it grows.
	ChangeFeed() changelog.Feed
	// PruneChanges drops the entries made before before and returns how
	// many it dropped.
	PruneChanges(ctx context.Context, before time.Time) (int, error)
	// ChangeCursor, SetChangeCursor and DropChangeCursor keep where a
	// consumer that must see every entry has read to; pruning keeps
	// every entry after the smallest cursor.
	ChangeCursor(ctx context.Context, name string) (int64, error)
	SetChangeCursor(ctx context.Context, name string, after int64) error
	DropChangeCursor(ctx context.Context, name string) error
}

// changeTime is a time as entries (and the API) write it.
func changeTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// last is the sequence number of the log's last entry.
func (e *env) last() int64 {
	e.t.Helper()
	b, err := e.stores.Changes.ChangeBounds(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return b.Last
}

// since returns every entry after seq after, checking that they follow
// one another with no hole.
func (e *env) since(after int64) []changelog.Entry {
	e.t.Helper()
	var out []changelog.Entry
	for {
		es, err := e.stores.Changes.Changes(e.ctx, after, 7)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, en := range es {
			if en.Seq != after+1 {
				e.t.Fatalf("entry %d follows %d", en.Seq, after)
			}
			after = en.Seq
		}
		out = append(out, es...)
		if len(es) < 7 {
			return out
		}
	}
}

// types lists the entries' types.
func types(es []changelog.Entry) []changelog.Type {
	out := make([]changelog.Type, len(es))
	for i, en := range es {
		out[i] = en.Type
	}
	return out
}

// fields decodes an entry's data, numbers as json.Number so that they
// compare exactly.
func fields(t *testing.T, en changelog.Entry) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(en.Data))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("entry %d (%s) data %s: %v", en.Seq, en.Type, en.Data, err)
	}
	return m
}

// want checks that the data of en has exactly the keys of w, with the
// values w gives (numbers compared as their JSON text).
func want(t *testing.T, en changelog.Entry, w map[string]any) {
	t.Helper()
	got := fields(t, en)
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(w))) {
		t.Fatalf("entry %d (%s) has keys %v, want %v: %s", en.Seq, en.Type, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(w)), en.Data)
	}
	for k, v := range w {
		if v == nil {
			continue // present, any value
		}
		if g := jsonText(t, got[k]); g != jsonText(t, v) {
			t.Errorf("entry %d (%s): %s = %s, want %s", en.Seq, en.Type, k, g, jsonText(t, v))
		}
	}
}

// jsonText is v as JSON with the keys of its objects sorted, so that a
// struct and the object it decodes to read the same.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var generic any
	if err := d.Decode(&generic); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(generic); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testChanges(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Changes == nil {
		t.Skip("this store keeps no change log")
	}
	t.Run("a trade writes its trade, its price, its notification and the trader's balances, in that order", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("tia", 5000, 0)
		from := e.last()
		res, err := e.buy(u, m, market.Yes, 600)
		if err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if got := types(es); !slices.Equal(got, []changelog.Type{changelog.Trade, changelog.Price, changelog.Notification, changelog.Balance}) {
			t.Fatalf("entries %v, want trade, price, notification, balance", got)
		}
		tr := res.Trade
		for _, en := range es[:2] {
			if en.EventID != ev.ID || en.PoolID != m.PoolID || en.MarketID != m.ID || en.UserID != 0 {
				t.Errorf("%s entry placed at event %d, pool %d, market %d, user %d", en.Type, en.EventID, en.PoolID, en.MarketID, en.UserID)
			}
		}
		want(t, es[0], map[string]any{"trade_id": tr.ID, "market_id": m.ID, "pool_id": m.PoolID, "event_id": ev.ID,
			"side": "YES", "action": "buy", "shares": tr.Shares, "amount_kopecks": tr.Amount,
			"yes_probability": tr.PriceAfter, "created_at": changeTime(tr.CreatedAt)})
		after := e.market(m.ID)
		want(t, es[1], map[string]any{"market_id": m.ID, "pool_id": m.PoolID, "event_id": ev.ID, "yes_probability": tr.PriceAfter,
			"q_yes": after.QYes, "q_no": after.QNo, "trade_id": tr.ID, "at": changeTime(tr.CreatedAt)})

		ns, err := e.stores.Markets.(social.NotificationStore).Notifications(e.ctx, u.ID, false, 10, 0)
		if err != nil || len(ns) != 1 {
			t.Fatalf("notifications = %v, %v", ns, err)
		}
		n := ns[0]
		if es[2].UserID != u.ID {
			t.Errorf("notification entry for user %d, want %d", es[2].UserID, u.ID)
		}
		title, msg := n.Render("en")
		want(t, es[2], map[string]any{"id": n.ID, "user_id": u.ID, "type": social.TypeTradeExecuted, "title": title, "message": msg,
			"read": false, "created_at": changeTime(n.CreatedAt), "related_id": ev.ID, "related_type": social.RelatedEvent, "link": n.Link(), "data": n.Data})

		b := e.balances(u)
		if es[3].UserID != u.ID {
			t.Errorf("balance entry for user %d, want %d", es[3].UserID, u.ID)
		}
		want(t, es[3], map[string]any{"user_id": u.ID, "balance": b.Balance, "bonus_balance": b.Bonus, "total_balance": b.Total(), "reason": "trade"})
		for _, en := range es {
			if en.At.IsZero() || en.Seq <= from {
				t.Errorf("entry %+v", en)
			}
		}
	})

	t.Run("a sale's trade entry says sell and what it paid", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("sol", 5000, 0)
		bought, err := e.buy(u, m, market.No, 800)
		if err != nil {
			t.Fatal(err)
		}
		from := e.last()
		res, err := e.sell(u, m, market.No, bought.Trade.Shares/2)
		if err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if len(es) != 4 {
			t.Fatalf("entries %v", types(es))
		}
		want(t, es[0], map[string]any{"trade_id": res.Trade.ID, "market_id": m.ID, "pool_id": m.PoolID, "event_id": ev.ID,
			"side": "NO", "action": "sell", "shares": res.Trade.Shares, "amount_kopecks": res.Trade.Amount,
			"yes_probability": res.Trade.PriceAfter, "created_at": changeTime(res.Trade.CreatedAt)})
	})

	t.Run("a refused trade and a failed batch leave no entry", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		poor := e.user("poor", 100, 0)
		from := e.last()
		if _, err := e.buy(poor, m, market.Yes, 600); !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("buy beyond the balance: %v", err)
		}
		if _, err := e.sell(poor, m, market.Yes, 10); !errors.Is(err, market.ErrNoPosition) {
			t.Fatalf("sell without a position: %v", err)
		}
		boom := errors.New("boom")
		_, err := e.stores.Markets.Exec(e.ctx, market.LockFor(m.ID, []market.Request{{UserID: poor.ID}}), func(st *market.State) (*market.Effects, error) {
			eff, err := market.DecideTrades(st, []market.Request{{UserID: poor.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 50}})
			if err != nil || len(eff.Trades) != 1 {
				t.Errorf("the batch's one buy did not trade: %v", err)
			}
			return nil, boom // a decision that fails after trading writes nothing
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Exec = %v, want the decision's error", err)
		}
		if es := e.since(from); len(es) != 0 || e.last() != from {
			t.Fatalf("refused trades wrote %v", types(es))
		}
	})

	t.Run("a batch over several markets writes each trade with its price, then one balance per trader", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5, 0.4)
		m1, m2 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		u := e.user("bat", 5000, 0)
		reqs := [][]market.Request{
			{{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 300}, {UserID: u.ID, Side: market.No, Action: market.ActionBuy, Amount: 200}},
			{{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 400}},
		}
		from := e.last()
		effs, err := e.stores.Markets.ExecMarkets(e.ctx, []market.Lock{market.LockFor(m1.ID, reqs[0]), market.LockFor(m2.ID, reqs[1])},
			func(sts []*market.State) ([]*market.Effects, error) { return market.DecideMarkets(sts, reqs) })
		if err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		T, P, N, B := changelog.Trade, changelog.Price, changelog.Notification, changelog.Balance
		if got := types(es); !slices.Equal(got, []changelog.Type{T, P, T, P, T, P, N, N, N, B}) {
			t.Fatalf("entries %v", got)
		}
		ids := []int64{effs[0].Trades[0].Trade.ID, effs[0].Trades[1].Trade.ID, effs[1].Trades[0].Trade.ID}
		for i, id := range ids {
			if got := fields(t, es[2*i])["trade_id"]; jsonText(t, got) != jsonText(t, id) {
				t.Errorf("trade entry %d names trade %v, want %d", i, got, id)
			}
			if got := fields(t, es[2*i+1])["trade_id"]; jsonText(t, got) != jsonText(t, id) {
				t.Errorf("price entry %d names trade %v, want %d", i, got, id)
			}
		}
		b := e.balances(u)
		want(t, es[9], map[string]any{"user_id": u.ID, "balance": b.Balance, "bonus_balance": b.Bonus, "total_balance": b.Total(), "reason": "trade"})
	})

	t.Run("a trade on an exclusive pool writes one price per market of the pool", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.exclusiveEvent(e.creator(), 0.02, 10000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		u := e.user("ex", 5000, 0)
		from := e.last()
		res, err := e.buy(u, ms[1], market.Yes, 700)
		if err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if got := types(es); !slices.Equal(got, []changelog.Type{changelog.Trade, changelog.Price, changelog.Price, changelog.Price, changelog.Notification, changelog.Balance}) {
			t.Fatalf("entries %v", got)
		}
		seen := map[int64]bool{}
		for i, en := range es[1:4] {
			mk := e.market(en.MarketID)
			if mk.PoolID != ev.Pools[0].ID || en.PoolID != mk.PoolID || en.EventID != ev.ID {
				t.Fatalf("price entry %d for market %d, pool %d", i, en.MarketID, en.PoolID)
			}
			seen[en.MarketID] = true
			want(t, en, map[string]any{"market_id": mk.ID, "pool_id": mk.PoolID, "event_id": ev.ID, "yes_probability": nil,
				"q_yes": mk.QYes, "q_no": mk.QNo, "trade_id": res.Trade.ID, "at": changeTime(res.Trade.CreatedAt)})
		}
		if es[1].MarketID != ms[1].ID || len(seen) != 3 {
			t.Errorf("prices of markets %v, the traded one (%d) first", slices.Collect(maps.Keys(seen)), ms[1].ID)
		}
		if got := fields(t, es[1])["yes_probability"]; jsonText(t, got) != jsonText(t, res.Trade.PriceAfter) {
			t.Errorf("the traded market's price entry says %v, its trade %v", got, res.Trade.PriceAfter)
		}
	})

	t.Run("a partner's bet is logged as any trade, with the sub-account's balances, and a replay writes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		if e.partners == nil {
			t.Skip("this store has no partner store")
		}
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		p := e.partner("Bookie", 50000)
		from := e.last()
		bet := partner.Bet{ExternalUserID: "u-1", MarketID: m.ID, Side: market.No, AmountKopecks: 1000, ClientBetID: "b1"}
		rc, err := e.partners.Bet(e.ctx, p, bet)
		if err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if got := types(es); !slices.Equal(got, []changelog.Type{changelog.Trade, changelog.Price, changelog.Notification, changelog.Balance}) {
			t.Fatalf("entries %v", got)
		}
		if f := fields(t, es[0]); jsonText(t, f["side"]) != `"NO"` || jsonText(t, f["action"]) != `"buy"` || jsonText(t, f["shares"]) != jsonText(t, rc.SharesDelta) {
			t.Errorf("trade entry %s for receipt %+v", es[0].Data, rc)
		}
		// The float paid the bet into the sub-account, which spent it.
		want(t, es[3], map[string]any{"user_id": rc.UserID, "balance": 0, "bonus_balance": 0, "total_balance": 0, "reason": "trade"})
		if es[2].UserID != rc.UserID || es[3].UserID != rc.UserID {
			t.Errorf("entries for users %d and %d, the sub-account is %d", es[2].UserID, es[3].UserID, rc.UserID)
		}
		last := e.last()
		if again, err := e.partners.Bet(e.ctx, p, bet); err != nil || !again.Replayed {
			t.Fatalf("replay: %+v, %v", again, err)
		}
		if e.last() != last {
			t.Errorf("a replayed bet wrote %v", types(e.since(last)))
		}
	})

	t.Run("a resolution and a void write one market_resolved entry per market and nothing per holder", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 10000, 0.5, 0.5)
		m1, m2 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		a, b := e.user("a", 5000, 0), e.user("b", 5000, 0)
		for _, u := range []*account.User{a, b} {
			for _, m := range []*market.Market{m1, m2} {
				if _, err := e.buy(u, m, market.Yes, 500); err != nil {
					t.Fatal(err)
				}
			}
		}
		from := e.last()
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m1.PoolID, m1.ID, "NO"); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Resolve(e.ctx, m2.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if got := types(es); !slices.Equal(got, []changelog.Type{changelog.MarketResolved, changelog.MarketResolved}) {
			t.Fatalf("entries %v, want two market_resolved", got)
		}
		for i, tc := range []struct {
			m       *market.Market
			outcome string
			by      market.Resolver
		}{{m1, "NO", market.ResolvedByCreator}, {m2, "VOID", market.ResolvedByOperator}} {
			now := e.market(tc.m.ID)
			if es[i].MarketID != tc.m.ID || es[i].PoolID != tc.m.PoolID || es[i].EventID != ev.ID || es[i].UserID != 0 {
				t.Errorf("entry %d placed at %d/%d/%d", i, es[i].EventID, es[i].PoolID, es[i].MarketID)
			}
			want(t, es[i], map[string]any{"market_id": tc.m.ID, "pool_id": tc.m.PoolID, "event_id": ev.ID,
				"winning_outcome": tc.outcome, "resolved_at": changeTime(*now.ResolvedAt), "resolved_by": string(tc.by)})
		}
		if err := e.markets.Resolve(e.ctx, m1.ID, "YES"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("second resolution: %v", err)
		}
		if e.last() != es[1].Seq {
			t.Errorf("a refused resolution wrote entries")
		}
	})

	t.Run("an exclusive pool's resolution writes one entry per market of the pool", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0.02, 10000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		u := e.user("ex", 5000, 0)
		if _, err := e.buy(u, ms[0], market.Yes, 700); err != nil {
			t.Fatal(err)
		}
		from := e.last()
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[2].PoolID, ms[2].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if len(es) != 3 {
			t.Fatalf("entries %v, want three market_resolved", types(es))
		}
		for i, en := range es {
			won := "NO"
			if en.MarketID == ms[2].ID {
				won = "YES"
			}
			if en.Type != changelog.MarketResolved || en.MarketID != ms[i].ID {
				t.Errorf("entry %d: %s of market %d", i, en.Type, en.MarketID)
			}
			if got := fields(t, en)["winning_outcome"]; got != won {
				t.Errorf("market %d resolved %v, want %s", en.MarketID, got, won)
			}
		}
	})

	t.Run("a comment, a reply and the reply's notification are logged with the comment as the list shows it", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		hidden := se.user("hid", 0, 0)
		if _, err := se.accounts.UpdateProfile(se.ctx, hidden.ID, account.ProfilePatch{ProfileHidden: ptr(true), Nickname: ptr("shy")}); err != nil {
			t.Fatal(err)
		}
		open := se.user("ope", 0, 0)
		from := se.last()
		top := se.post(hidden, se.ev.ID, "first!", 0)
		reply := se.post(open, se.ev.ID, "a reply", top.ID)
		es := se.since(from)
		if got := types(es); !slices.Equal(got, []changelog.Type{changelog.Comment, changelog.Comment, changelog.Notification}) {
			t.Fatalf("entries %v", got)
		}
		if es[0].EventID != se.ev.ID || es[0].UserID != 0 || es[0].MarketID != 0 {
			t.Errorf("comment entry placed at event %d, user %d", es[0].EventID, es[0].UserID)
		}
		want(t, es[0], map[string]any{"id": top.ID, "event_id": se.ev.ID, "parent_id": nil, "user_id": hidden.ID, "content": "first!",
			"likes_count": 0, "dislikes_count": 0, "replies_count": 0, "created_at": changeTime(top.CreatedAt),
			"user":          map[string]any{"id": hidden.ID, "name": social.AnonymousName, "nickname": "", "profile_hidden": true, "avatar_url": ""},
			"user_reaction": nil})
		if f := fields(t, es[0]); f["parent_id"] != nil || f["user_reaction"] != nil {
			t.Errorf("a top-level comment's entry: parent_id %v, user_reaction %v", f["parent_id"], f["user_reaction"])
		}
		want(t, es[1], map[string]any{"id": reply.ID, "event_id": se.ev.ID, "parent_id": top.ID, "user_id": open.ID, "content": "a reply",
			"likes_count": 0, "dislikes_count": 0, "replies_count": 0, "created_at": changeTime(reply.CreatedAt),
			"user":          map[string]any{"id": open.ID, "name": open.Name, "nickname": "", "profile_hidden": false, "avatar_url": ""},
			"user_reaction": nil})
		ns := se.notifications(hidden)
		if len(ns) != 1 || es[2].UserID != hidden.ID {
			t.Fatalf("notifications %+v, entry for user %d", ns, es[2].UserID)
		}
		title, msg := ns[0].Render("en")
		want(t, es[2], map[string]any{"id": ns[0].ID, "user_id": hidden.ID, "type": social.TypeCommentReply, "title": title, "message": msg,
			"read": false, "created_at": changeTime(ns[0].CreatedAt), "related_id": top.ID, "related_type": social.RelatedComment, "link": ns[0].Link(), "data": ns[0].Data})
	})

	t.Run("a notification stored on its own is logged for its user", func(t *testing.T) {
		e := newEnv(t, newStores)
		notes, ok := e.stores.Markets.(social.NotificationStore)
		if !ok {
			t.Skip("this market store keeps no notifications")
		}
		u := e.user("sup", 0, 0)
		from := e.last()
		n := &social.Notification{UserID: u.ID, Type: social.TypeSupportReply, RelatedID: 4, RelatedType: social.RelatedChat,
			Data: social.NotificationData{Excerpt: `we "fixed" it`}}
		if err := notes.CreateNotification(e.ctx, n); err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if len(es) != 1 || es[0].Type != changelog.Notification || es[0].UserID != u.ID {
			t.Fatalf("entries %+v", es)
		}
		title, msg := n.Render("en")
		want(t, es[0], map[string]any{"id": n.ID, "user_id": u.ID, "type": social.TypeSupportReply, "title": title, "message": msg,
			"read": false, "created_at": changeTime(n.CreatedAt), "related_id": 4, "related_type": social.RelatedChat, "link": n.Link(), "data": n.Data})
	})

	t.Run("a credit logs the user's balances with its reason, one entry per user", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("cre", 0, 0)
		v := e.user("ver", 0, 0)
		from := e.last()
		if _, err := e.accounts.Credit(e.ctx, u.ID, 700, false); err != nil {
			t.Fatal(err)
		}
		if _, err := e.accounts.Credit(e.ctx, u.ID, 300, true); err != nil {
			t.Fatal(err)
		}
		err := e.stores.Accounts.Transfer(e.ctx, []account.Posting{
			{From: account.UserAccount(u.ID), To: account.UserAccount(v.ID), Amount: 100, Reason: "p2p"},
			{From: account.UserAccount(u.ID), To: account.UserAccount(v.ID), Amount: 50, Reason: "p2p"},
		})
		if err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		if got := types(es); !slices.Equal(got, []changelog.Type{changelog.Balance, changelog.Balance, changelog.Balance, changelog.Balance}) {
			t.Fatalf("entries %v", got)
		}
		want(t, es[0], map[string]any{"user_id": u.ID, "balance": 700, "bonus_balance": 0, "total_balance": 700, "reason": "deposit"})
		want(t, es[1], map[string]any{"user_id": u.ID, "balance": 700, "bonus_balance": 300, "total_balance": 1000, "reason": "deposit"})
		lo, hi := es[2], es[3]
		if lo.UserID != u.ID || hi.UserID != v.ID {
			t.Fatalf("a transfer's entries are for users %d and %d, want %d then %d", lo.UserID, hi.UserID, u.ID, v.ID)
		}
		want(t, lo, map[string]any{"user_id": u.ID, "balance": 550, "bonus_balance": 300, "total_balance": 850, "reason": "p2p"})
		want(t, hi, map[string]any{"user_id": v.ID, "balance": 150, "bonus_balance": 0, "total_balance": 150, "reason": "p2p"})

		from = e.last()
		err = e.stores.Accounts.Transfer(e.ctx, []account.Posting{{From: account.UserAccount(v.ID), To: account.UserAccount(u.ID), Amount: 1000, Reason: "p2p"}})
		if !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("overdraft: %v", err)
		}
		if es := e.since(from); len(es) != 0 {
			t.Fatalf("a refused transfer logged %v", types(es))
		}
	})

	testChangeLogReads(t, newStores)
}
