package market

import (
	"cmp"
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
	b := appendField(make([]byte, 0, 224), `{"trade_id":`, d.TradeID)
	b, ok := d.appendRest(b)
	if !ok {
		return marshal(d)
	}
	return b
}

// appendRest appends what follows the trade's id; ok is false for a
// float JSON has no number for.
func (d *tradeData) appendRest(b []byte) (_ []byte, ok bool) {
	b = appendField(b, `,"market_id":`, d.MarketID)
	b = appendField(b, `,"pool_id":`, d.PoolID)
	b = appendField(b, `,"event_id":`, d.EventID)
	b = appendStringField(b, `,"side":`, d.Side)
	b = appendStringField(b, `,"action":`, d.Action)
	b = appendField(b, `,"shares":`, d.Shares)
	b = appendField(b, `,"amount_kopecks":`, d.AmountKopecks)
	b, ok = jsonenc.AppendFloat(append(b, `,"yes_probability":`...), d.YesProbability)
	if !ok {
		return b, false
	}
	b = appendStringField(b, `,"created_at":`, d.CreatedAt)
	return append(b, '}'), true
}

func (d *priceData) json() json.RawMessage {
	b, ok := d.appendHead(make([]byte, 0, 176))
	if !ok {
		return marshal(d)
	}
	return d.appendTail(appendField(b, `,"trade_id":`, d.TradeID))
}

// appendHead appends what comes before the trade's id, appendTail what
// follows it; ok is false for a float JSON has no number for.
func (d *priceData) appendHead(b []byte) (_ []byte, ok bool) {
	b = appendField(b, `{"market_id":`, d.MarketID)
	b = appendField(b, `,"pool_id":`, d.PoolID)
	b = appendField(b, `,"event_id":`, d.EventID)
	b, ok = jsonenc.AppendFloat(append(b, `,"yes_probability":`...), d.YesProbability)
	if !ok {
		return b, false
	}
	b = appendField(b, `,"q_yes":`, d.QYes)
	return appendField(b, `,"q_no":`, d.QNo), true
}

func (d *priceData) appendTail(b []byte) []byte {
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
// no entries. It is PrepareChanges followed by Entries.
func ExecChanges(effs []*Effects, before map[account.Ref]int64, at time.Time) []changelog.Entry {
	return PrepareChanges(effs, before, at).Entries()
}

// PreparedChanges are the entries of ExecChanges built as far as they can
// be before the trades and notifications have ids. A store prepares them
// while the database inserts the rows that give the ids (the
// transaction's market locks are held meanwhile, and building the entries
// took about a tenth of that time), then takes the Entries.
type PreparedChanges struct {
	entries []changelog.Entry
	// parts has, for each entry, what its data is made of.
	parts []entryParts
	size  int
}

// entryParts is an entry's data: head, the id of *trade or *note (when
// set), then tail; or whole, for data that needs no id.
type entryParts struct {
	head, tail []byte
	trade      *Trade
	note       *social.Notification
	whole      json.RawMessage
	// slow builds the data once the id is known, for the rare value
	// the fast path leaves to encoding/json.
	slow func() json.RawMessage
}

// PrepareChanges prepares the entries ExecChanges returns. It reads of
// effs all but the ids of the trades and notifications, which Entries
// reads.
func PrepareChanges(effs []*Effects, before map[account.Ref]int64, at time.Time) *PreparedChanges {
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
	p := &PreparedChanges{entries: make([]changelog.Entry, 0, n), parts: make([]entryParts, 0, n)}
	// The id-free parts of all entries share one buffer; each part is a
	// full slice of it, so that nothing appended later moves it.
	buf := make([]byte, 0, 200*n)
	cut := func(from int) []byte { return buf[from:len(buf):len(buf)] }
	add := func(e changelog.Entry, x entryParts) {
		p.entries = append(p.entries, e)
		p.parts = append(p.parts, x)
	}
	postings := make([]account.Posting, 0, np)
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for _, te := range eff.Trades {
			postings = append(postings, te.Postings...)
			// A decision that traded sets Market, which places the trade.
			m := eff.Market
			if m == nil {
				continue
			}
			t := te.Trade
			td := tradeData{MarketID: t.MarketID, PoolID: m.PoolID, EventID: m.EventID,
				Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares, AmountKopecks: t.Amount,
				YesProbability: t.PriceAfter, CreatedAt: format(t.CreatedAt)}
			e := changelog.Entry{Type: changelog.Trade, EventID: m.EventID, PoolID: m.PoolID, MarketID: t.MarketID, At: t.CreatedAt}
			from := len(buf)
			var ok bool
			if buf, ok = td.appendRest(buf); ok {
				add(e, entryParts{head: tradeHead, trade: t, tail: cut(from)})
			} else {
				buf = buf[:from]
				add(e, entryParts{slow: slowTrade(td, t)})
			}
			for i := -1; i < len(te.PoolPrices); i++ {
				pp := &te.Price
				if i >= 0 {
					pp = &te.PoolPrices[i]
				}
				id := cmp.Or(pp.MarketID, t.MarketID)
				at := pp.At
				if at.IsZero() {
					at = t.CreatedAt
				}
				pd := priceData{MarketID: id, PoolID: m.PoolID, EventID: m.EventID, YesProbability: pp.YesProbability,
					QYes: pp.QYes, QNo: pp.QNo, At: format(at)}
				e := changelog.Entry{Type: changelog.Price, EventID: m.EventID, PoolID: m.PoolID, MarketID: id, At: at}
				from := len(buf)
				if buf, ok = pd.appendHead(buf); ok {
					buf = append(buf, `,"trade_id":`...)
					head := cut(from)
					from = len(buf)
					buf = pd.appendTail(buf)
					add(e, entryParts{head: head, trade: t, tail: cut(from)})
				} else {
					buf = buf[:from]
					add(e, entryParts{slow: slowPrice(pd, t)})
				}
			}
		}
		postings = append(postings, eff.Postings...)
	}
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for i := range eff.Notifications {
			nt := &eff.Notifications[i]
			e, rest := social.PrepareNotificationChange(nt)
			add(e, entryParts{head: noteHead, note: nt, tail: rest})
		}
	}
	for _, e := range account.BalanceChanges(before, postings, "trade", at) {
		add(e, entryParts{whole: e.Data})
	}
	for _, x := range p.parts {
		p.size += len(x.head) + len(x.tail) + len(x.whole) + 20 // an id's digits at most
	}
	return p
}

var (
	tradeHead = []byte(`{"trade_id":`)
	noteHead  = []byte(`{"id":`)
)

// slowTrade and slowPrice build the data of d for trade t once it has its
// id, through encoding/json.
func slowTrade(d tradeData, t *Trade) func() json.RawMessage {
	return func() json.RawMessage { d.TradeID = t.ID; return marshal(d) }
}

func slowPrice(d priceData, t *Trade) func() json.RawMessage {
	return func() json.RawMessage { d.TradeID = t.ID; return marshal(d) }
}

// Entries returns the entries, with the ids the trades and notifications
// have now. Their data share one buffer.
func (p *PreparedChanges) Entries() []changelog.Entry {
	buf := make([]byte, 0, p.size)
	for i := range p.parts {
		x := &p.parts[i]
		var data []byte
		switch {
		case x.slow != nil:
			data = x.slow()
		case x.whole != nil:
			data = x.whole
		default:
			from := len(buf)
			buf = append(buf, x.head...)
			if x.trade != nil {
				buf = strconv.AppendInt(buf, x.trade.ID, 10)
			} else {
				buf = strconv.AppendInt(buf, x.note.ID, 10)
			}
			buf = append(buf, x.tail...)
			data = buf[from:len(buf):len(buf)]
		}
		p.entries[i].Data = data
	}
	return p.entries
}
