package market

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/internal/jsonenc"
	"github.com/predictkit/predictkit/social"
)

// The change log's entries of the money path. Every store builds them
// with the functions below, from the Effects it wrote, once the ids are
// set and before it commits, so that an entry reads the same whatever the
// store.

// changeTime writes a time as the API does: RFC 3339 in UTC with the
// nanoseconds it has.
func changeTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// tradeData is the data of a trade entry. It names no trader: the entry
// is public.
type tradeData struct {
	TradeID        int64   `json:"trade_id"`
	MarketID       int64   `json:"market_id"`
	PoolID         int64   `json:"pool_id"`
	EventID        int64   `json:"event_id"`
	Side           string  `json:"side"`
	Action         string  `json:"action"`
	Shares         int64   `json:"shares"`
	AmountKopecks  int64   `json:"amount_kopecks"`
	YesProbability float64 `json:"yes_probability"`
	CreatedAt      string  `json:"created_at"`
}

// priceData is the data of a price entry.
type priceData struct {
	MarketID       int64   `json:"market_id"`
	PoolID         int64   `json:"pool_id"`
	EventID        int64   `json:"event_id"`
	YesProbability float64 `json:"yes_probability"`
	QYes           int64   `json:"q_yes"`
	QNo            int64   `json:"q_no"`
	TradeID        int64   `json:"trade_id"`
	At             string  `json:"at"`
}

// resolvedData is the data of a market_resolved entry.
type resolvedData struct {
	MarketID       int64    `json:"market_id"`
	PoolID         int64    `json:"pool_id"`
	EventID        int64    `json:"event_id"`
	WinningOutcome string   `json:"winning_outcome"`
	ResolvedAt     string   `json:"resolved_at"`
	ResolvedBy     Resolver `json:"resolved_by"`
}

// The trade and price entries, two of every trade's four, write their
// JSON by appending: encoding/json's reflection was most of the cost of
// building a hot market's log. The bytes are encoding/json's
// (TestAppendedEntriesAreEncodingJSONs checks it on random values); a
// float JSON has no number for goes through encoding/json instead, which
// reports it.

func appendField(b []byte, name string, v int64) []byte {
	b = append(b, name...)
	return strconv.AppendInt(b, v, 10)
}

func appendStringField(b []byte, name, v string) []byte {
	return jsonenc.AppendString(append(b, name...), v)
}

func (d *tradeData) json() json.RawMessage {
	b := make([]byte, 0, 224)
	b = appendField(b, `{"trade_id":`, d.TradeID)
	b = appendField(b, `,"market_id":`, d.MarketID)
	b = appendField(b, `,"pool_id":`, d.PoolID)
	b = appendField(b, `,"event_id":`, d.EventID)
	b = appendStringField(b, `,"side":`, d.Side)
	b = appendStringField(b, `,"action":`, d.Action)
	b = appendField(b, `,"shares":`, d.Shares)
	b = appendField(b, `,"amount_kopecks":`, d.AmountKopecks)
	b, ok := jsonenc.AppendFloat(append(b, `,"yes_probability":`...), d.YesProbability)
	if !ok {
		return marshal(d)
	}
	b = appendStringField(b, `,"created_at":`, d.CreatedAt)
	return append(b, '}')
}

func (d *priceData) json() json.RawMessage {
	b := make([]byte, 0, 176)
	b = appendField(b, `{"market_id":`, d.MarketID)
	b = appendField(b, `,"pool_id":`, d.PoolID)
	b = appendField(b, `,"event_id":`, d.EventID)
	b, ok := jsonenc.AppendFloat(append(b, `,"yes_probability":`...), d.YesProbability)
	if !ok {
		return marshal(d)
	}
	b = appendField(b, `,"q_yes":`, d.QYes)
	b = appendField(b, `,"q_no":`, d.QNo)
	b = appendField(b, `,"trade_id":`, d.TradeID)
	b = appendStringField(b, `,"at":`, d.At)
	return append(b, '}')
}

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // numbers and strings always marshal
	}
	return b
}

// TradeChanges returns the public entries of trade te on market m (whose
// PoolID and EventID place it): the trade, then the price of every market
// it moved, m's first, then, on an exclusive pool, the pool's other
// markets in the pool's order. te.Trade.ID must be set.
func TradeChanges(m *Market, te *TradeEffect) []changelog.Entry {
	return appendTradeChanges(make([]changelog.Entry, 0, 2+len(te.PoolPrices)), m, te, changeTime)
}

// appendTradeChanges appends TradeChanges(m, te) to out, writing times
// with format.
func appendTradeChanges(out []changelog.Entry, m *Market, te *TradeEffect, format func(time.Time) string) []changelog.Entry {
	t := te.Trade
	out = append(out, changelog.Entry{Type: changelog.Trade, EventID: m.EventID, PoolID: m.PoolID, MarketID: t.MarketID, At: t.CreatedAt,
		Data: (&tradeData{TradeID: t.ID, MarketID: t.MarketID, PoolID: m.PoolID, EventID: m.EventID,
			Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares, AmountKopecks: t.Amount,
			YesProbability: t.PriceAfter, CreatedAt: format(t.CreatedAt)}).json()})
	price := func(p *PricePoint) {
		id := p.MarketID
		if id == 0 {
			id = t.MarketID
		}
		at := p.At
		if at.IsZero() {
			at = t.CreatedAt
		}
		out = append(out, changelog.Entry{Type: changelog.Price, EventID: m.EventID, PoolID: m.PoolID, MarketID: id, At: at,
			Data: (&priceData{MarketID: id, PoolID: m.PoolID, EventID: m.EventID, YesProbability: p.YesProbability,
				QYes: p.QYes, QNo: p.QNo, TradeID: t.ID, At: format(at)}).json()})
	}
	price(&te.Price)
	for i := range te.PoolPrices {
		price(&te.PoolPrices[i])
	}
	return out
}

// ResolvedChange is the public entry of market m resolved or voided (m as
// the settlement left it). A settlement writes this one entry per market
// and none per holder: a market may have a great many holders.
func ResolvedChange(m *Market) changelog.Entry {
	var at time.Time
	if m.ResolvedAt != nil {
		at = *m.ResolvedAt
	}
	return changelog.Entry{Type: changelog.MarketResolved, EventID: m.EventID, PoolID: m.PoolID, MarketID: m.ID, At: at,
		Data: marshal(resolvedData{MarketID: m.ID, PoolID: m.PoolID, EventID: m.EventID, WinningOutcome: m.Outcome(),
			ResolvedAt: changeTime(at), ResolvedBy: m.ResolvedBy})}
}

// ExecChanges returns the entries of a committed Exec or ExecMarkets,
// whose decision saw the balances before (State.Balances) and returned
// effs (nil for a market without effects): every trade with its prices,
// market after market and trade after trade, then the notifications,
// then one balance entry per user whose money the trades moved, with the
// balances after all of them. The ids of the trades and the
// notifications must be set. A batch whose every request was refused has
// no entries.
func ExecChanges(effs []*Effects, before map[account.Ref]int64, at time.Time) []changelog.Entry {
	// A batch's trades share one time: it is written once.
	var last time.Time
	var lastText string
	format := func(t time.Time) string {
		if !t.Equal(last) || lastText == "" {
			last, lastText = t, changeTime(t)
		}
		return lastText
	}
	n, np := 0, 0
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for _, te := range eff.Trades {
			n += 3 + len(te.PoolPrices) // trade, prices, and most often a balance
			np += len(te.Postings)
		}
		n += len(eff.Notifications)
		np += len(eff.Postings)
	}
	out := make([]changelog.Entry, 0, n)
	postings := make([]account.Posting, 0, np)
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for _, te := range eff.Trades {
			// A decision that traded sets Market, which places the trade.
			if eff.Market != nil {
				out = appendTradeChanges(out, eff.Market, te, format)
			}
			postings = append(postings, te.Postings...)
		}
		postings = append(postings, eff.Postings...)
	}
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for i := range eff.Notifications {
			out = append(out, social.NotificationChange(&eff.Notifications[i]))
		}
	}
	return append(out, account.BalanceChanges(before, postings, "trade", at)...)
}
