package market

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/internal/jsonenc"
	"github.com/predictkit/predictkit/social"
)

// The change log's entries of the money path. Every store builds them
// with the functions below, from the Effects it wrote, before it commits
// (the ids of new trades and notifications put in once they are known),
// so that an entry reads the same whatever the store.

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
// (TestAppendedEntriesAreEncodingJSONs checks it on random values). A
// price JSON has no number for (NaN, an infinity) is a broken decision:
// it panics, as encoding/json would have refused it.

func appendField(b []byte, name string, v int64) []byte {
	b = append(b, name...)
	return strconv.AppendInt(b, v, 10)
}

func appendStringField(b []byte, name, v string) []byte {
	return jsonenc.AppendString(append(b, name...), v)
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
	p := &PreparedChanges{}
	p.addTrade(m, te, changeTime)
	return p.Entries()
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
	// buf holds the id-free parts of all entries; each part is a full
	// slice of it, so that nothing appended later moves it.
	buf []byte
	// postings gathers the postings the balance entries are made of.
	postings []account.Posting
	// data holds the entries' data, one after another, once Entries has
	// run.
	data []byte
}

// prepared keeps released PreparedChanges, whose memory the next batch
// reuses: a hot market commits hundreds of batches a second, and
// allocating their entries anew every time made the garbage collector
// run more often.
var prepared = sync.Pool{New: func() any { return new(PreparedChanges) }}

// maxKept bounds the bytes of data a released PreparedChanges keeps, so
// that one unusually large batch does not stay in memory for good.
const maxKept = 1 << 20

// entryParts is an entry's data: head, the id of *trade or *note (when
// set), then tail; or whole, for data that needs no id.
type entryParts struct {
	head, tail []byte
	trade      *Trade
	note       *social.Notification
	whole      json.RawMessage
}

var (
	tradeHead = []byte(`{"trade_id":`)
	noteHead  = []byte(`{"id":`)
)

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
	p := prepared.Get().(*PreparedChanges)
	p.entries, p.parts = slices.Grow(p.entries[:0], n), slices.Grow(p.parts[:0], n)
	p.buf, p.postings = slices.Grow(p.buf[:0], 200*n), slices.Grow(p.postings[:0], np)
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for _, te := range eff.Trades {
			p.postings = append(p.postings, te.Postings...)
			// A decision that traded sets Market, which places the trade.
			if eff.Market != nil {
				p.addTrade(eff.Market, te, format)
			}
		}
		p.postings = append(p.postings, eff.Postings...)
	}
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for i := range eff.Notifications {
			nt := &eff.Notifications[i]
			from := len(p.buf)
			var e changelog.Entry
			e, p.buf = social.AppendNotificationChange(p.buf, nt)
			p.add(e, entryParts{head: noteHead, note: nt, tail: p.cut(from)})
		}
	}
	for _, e := range account.BalanceChanges(before, p.postings, "trade", at) {
		p.add(e, entryParts{whole: e.Data})
	}
	return p
}

func (p *PreparedChanges) add(e changelog.Entry, x entryParts) {
	p.entries = append(p.entries, e)
	p.parts = append(p.parts, x)
}

// cut returns what buf holds from from on.
func (p *PreparedChanges) cut(from int) []byte { return p.buf[from:len(p.buf):len(p.buf)] }

// addTrade adds the public entries of trade te on market m (whose PoolID
// and EventID place it), writing times with format: the trade, then the
// price of every market it moved, m's first, then, on an exclusive pool,
// the pool's other markets in the pool's order.
func (p *PreparedChanges) addTrade(m *Market, te *TradeEffect, format func(time.Time) string) {
	t := te.Trade
	td := tradeData{MarketID: t.MarketID, PoolID: m.PoolID, EventID: m.EventID,
		Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares, AmountKopecks: t.Amount,
		YesProbability: t.PriceAfter, CreatedAt: format(t.CreatedAt)}
	from := len(p.buf)
	var ok bool
	if p.buf, ok = td.appendRest(p.buf); !ok {
		panic(fmt.Sprintf("market: trade on market %d: price %v", t.MarketID, t.PriceAfter))
	}
	p.add(changelog.Entry{Type: changelog.Trade, EventID: m.EventID, PoolID: m.PoolID, MarketID: t.MarketID, At: t.CreatedAt},
		entryParts{head: tradeHead, trade: t, tail: p.cut(from)})
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
		from := len(p.buf)
		if p.buf, ok = pd.appendHead(p.buf); !ok {
			panic(fmt.Sprintf("market: price of market %d: %v", id, pp.YesProbability))
		}
		p.buf = append(p.buf, `,"trade_id":`...)
		head := p.cut(from)
		from = len(p.buf)
		p.buf = pd.appendTail(p.buf)
		p.add(changelog.Entry{Type: changelog.Price, EventID: m.EventID, PoolID: m.PoolID, MarketID: id, At: at},
			entryParts{head: head, trade: t, tail: p.cut(from)})
	}
}

// Entries returns the entries, with the ids the trades and notifications
// have now. Their data lie one after another in one buffer, which Data
// returns.
func (p *PreparedChanges) Entries() []changelog.Entry {
	size := 0
	for _, x := range p.parts {
		size += len(x.head) + len(x.tail) + len(x.whole) + 20 // an id's digits at most
	}
	buf := slices.Grow(p.data[:0], size)
	for i := range p.parts {
		x := &p.parts[i]
		from := len(buf)
		switch {
		case x.whole != nil:
			buf = append(buf, x.whole...)
		case x.trade != nil:
			buf = strconv.AppendInt(append(buf, x.head...), x.trade.ID, 10)
		default:
			buf = strconv.AppendInt(append(buf, x.head...), x.note.ID, 10)
		}
		buf = append(buf, x.tail...)
		p.entries[i].Data = buf[from:len(buf):len(buf)]
	}
	p.data = buf
	return p.entries
}

// Data returns the data of the entries Entries returned, one after
// another: what a store that keeps them as one value writes, without
// copying them again.
func (p *PreparedChanges) Data() []byte { return p.data }

// Release hands the memory of p, and of the entries it returned, to the
// next batch's PrepareChanges. Neither may be used after it.
func (p *PreparedChanges) Release() {
	if cap(p.buf)+cap(p.data) > maxKept {
		return
	}
	// Nothing released may keep a batch's Effects alive.
	clear(p.entries)
	clear(p.parts)
	clear(p.postings)
	prepared.Put(p)
}
