package market

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
)

// TestAppendedEntriesAreEncodingJSONs: the trade and price entries'
// hand-written JSON is encoding/json's, byte for byte.
func TestAppendedEntriesAreEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	floats := []float64{0, 1, 0.5, 1e-6, 9.99e-7, 1e-7, 1e-300, 5e-324, 1e21, 1e20, 123456.789, -0.25, math.SmallestNonzeroFloat64, math.MaxFloat64}
	strs := []string{"YES", "NO", "buy", "sell", "", `quo"te`, `back\slash`, "<b>&", "tab\t", "кириллица", "\u2028", string([]byte{0xff})}
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 42}
	pick := func() float64 {
		if r.IntN(3) == 0 {
			return floats[r.IntN(len(floats))]
		}
		return r.Float64() * math.Pow(10, float64(r.IntN(40)-20))
	}
	pickInt := func() int64 {
		if r.IntN(3) == 0 {
			return ints[r.IntN(len(ints))]
		}
		return r.Int64N(1 << 40)
	}
	pickStr := func() string {
		if r.IntN(2) == 0 {
			return time.Unix(r.Int64N(1<<33), r.Int64N(1e9)).UTC().Format(time.RFC3339Nano)
		}
		return strs[r.IntN(len(strs))]
	}
	same := func(t *testing.T, got json.RawMessage, v any) {
		t.Helper()
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appended %s\nencoding/json %s", got, want)
		}
	}
	t.Run("a trade's data reads as encoding/json writes it", func(t *testing.T) {
		for range 20000 {
			d := tradeData{TradeID: pickInt(), MarketID: pickInt(), PoolID: pickInt(), EventID: pickInt(), Side: pickStr(), Action: pickStr(),
				Shares: pickInt(), AmountKopecks: pickInt(), YesProbability: pick(), CreatedAt: pickStr()}
			same(t, d.json(), d)
		}
	})
	t.Run("a price's data reads as encoding/json writes it", func(t *testing.T) {
		for range 20000 {
			d := priceData{MarketID: pickInt(), PoolID: pickInt(), EventID: pickInt(), YesProbability: pick(), QYes: pickInt(), QNo: pickInt(),
				TradeID: pickInt(), At: pickStr()}
			same(t, d.json(), d)
		}
	})
}

// json and the price's json write the whole data as the entries do, the
// id between the parts.
func (d *tradeData) json() json.RawMessage {
	b, ok := d.appendRest(appendField(make([]byte, 0, 224), `{"trade_id":`, d.TradeID))
	if !ok {
		return marshal(d)
	}
	return b
}

func (d *priceData) json() json.RawMessage {
	b, ok := d.appendHead(make([]byte, 0, 176))
	if !ok {
		return marshal(d)
	}
	return d.appendTail(appendField(b, `,"trade_id":`, d.TradeID))
}

// BenchmarkTradeEntryData: a trade's and a price's data, appended and
// through encoding/json, in one run.
func BenchmarkTradeEntryData(b *testing.B) {
	at := time.Date(2026, 11, 24, 6, 22, 39, 761486000, time.UTC).Format(time.RFC3339Nano)
	td := tradeData{TradeID: 28627, MarketID: 1, PoolID: 1, EventID: 1, Side: "NO", Action: "sell", Shares: 394, AmountKopecks: 192, YesProbability: 0.5007280244855096, CreatedAt: at}
	pd := priceData{MarketID: 1, PoolID: 1, EventID: 1, YesProbability: 0.5007280244855096, QYes: 148655, QNo: 119534, TradeID: 28627, At: at}
	b.Run("appended", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = td.json()
			_ = pd.json()
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = marshal(td)
			_ = marshal(pd)
		}
	})
}

// BenchmarkExecChanges: the entries of a batch of 64 trades by 64 users,
// what a hot market's transaction builds between writing its rows and
// committing.
func BenchmarkExecChanges(b *testing.B) {
	balances := map[account.Ref]int64{}
	reqs := make([]Request, 64)
	for i := range reqs {
		balances[account.UserAccount(int64(i+1))] = 1_000_000
		reqs[i] = Request{UserID: int64(i + 1), Side: Side(i % 2), Action: ActionBuy, Amount: 1000}
	}
	st := testState(b, 0.02, balances)
	st.Market.Name = "Will it rain in Moscow tomorrow?"
	eff, err := DecideTrades(st, reqs)
	if err != nil {
		b.Fatal(err)
	}
	for i, te := range eff.Trades {
		te.Trade.ID = int64(1000 + i)
	}
	for i := range eff.Notifications {
		eff.Notifications[i].ID = int64(5000 + i)
	}
	effs := []*Effects{eff}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = ExecChanges(effs, balances, st.Now)
		}
	})
	// What a store does while the rows are inserted, and what it does
	// once they have their ids.
	b.Run("prepared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = PrepareChanges(effs, balances, st.Now)
		}
	})
	// A store that releases what it prepared once the entries are
	// written, as the PostgreSQL store does.
	b.Run("prepared, completed and released", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := PrepareChanges(effs, balances, st.Now)
			_ = p.Entries()
			p.Release()
		}
	})
	p := PrepareChanges(effs, balances, st.Now)
	b.Run("completed with the ids", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = p.Entries()
		}
	})
}

// TestPreparedChanges: entries prepared before the trades and
// notifications have ids, and completed after, are those built entry by
// entry once the ids are known.
func TestPreparedChanges(t *testing.T) {
	balances := map[account.Ref]int64{}
	var reqs []Request
	for i := range 6 {
		u := int64(i%3 + 1)
		balances[account.UserAccount(u)] = 1_000_000
		reqs = append(reqs, Request{UserID: u, Side: Side(i % 2), Action: ActionBuy, Amount: int64(1000 + 137*i)})
	}
	st := testState(t, 0.02, balances)
	st.Market.Name = `Rain "tomorrow" <in> Moscow & Tver`
	eff, err := DecideTrades(st, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(eff.Trades) != len(reqs) || len(eff.Notifications) == 0 {
		t.Fatalf("%d trades, %d notifications", len(eff.Trades), len(eff.Notifications))
	}
	// An exclusive pool's trade moves its other markets' prices too.
	eff.Trades[2].PoolPrices = []PricePoint{{MarketID: 8, YesProbability: 0.25, QYes: 10, QNo: 20}, {MarketID: 9, YesProbability: 0.125, QYes: 30, QNo: 40}}
	effs := []*Effects{nil, eff}

	p := PrepareChanges(effs, balances, st.Now)
	for i, te := range eff.Trades {
		te.Trade.ID = int64(100_000 + 7*i)
	}
	for i := range eff.Notifications {
		eff.Notifications[i].ID = int64(900 + i)
	}
	got := p.Entries()

	var want []changelog.Entry
	var postings []account.Posting
	for _, te := range eff.Trades {
		want = append(want, TradeChanges(eff.Market, te)...)
		postings = append(postings, te.Postings...)
	}
	for i := range eff.Notifications {
		want = append(want, social.NotificationChange(&eff.Notifications[i]))
	}
	want = append(want, account.BalanceChanges(balances, append(postings, eff.Postings...), "trade", st.Now)...)
	if len(got) != len(want) {
		t.Fatalf("%d entries prepared, %d built one by one", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Type != w.Type || g.EventID != w.EventID || g.PoolID != w.PoolID || g.MarketID != w.MarketID || g.UserID != w.UserID ||
			!g.At.Equal(w.At) || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("entry %d prepared:\n%+v %s\nbuilt one by one:\n%+v %s", i, g, g.Data, w, w.Data)
		}
		if !json.Valid(g.Data) {
			t.Fatalf("entry %d: %s", i, g.Data)
		}
	}
	t.Run("Data is the entries' data one after another", func(t *testing.T) {
		var joined []byte
		for _, e := range got {
			joined = append(joined, e.Data...)
		}
		if !bytes.Equal(p.Data(), joined) {
			t.Fatalf("Data:\n%s\nthe entries':\n%s", p.Data(), joined)
		}
	})
	t.Run("the entries' data do not overlap: appending to one leaves the next as it was", func(t *testing.T) {
		next := string(got[1].Data)
		_ = append(got[0].Data, "XXXXXXXX"...)
		if string(got[1].Data) != next {
			t.Fatalf("entry 1 became %s", got[1].Data)
		}
	})
	t.Run("memory released by one batch builds the next batch's entries right", func(t *testing.T) {
		p.Release()
		for round := range 3 {
			// Other trades each round, so that nothing of the last is
			// left over unnoticed.
			reqs := reqs[:len(reqs)-round]
			eff, err := DecideTrades(testState(t, 0.02, balances), reqs)
			if err != nil {
				t.Fatal(err)
			}
			for i, te := range eff.Trades {
				te.Trade.ID = int64(200_000 + 11*i + round)
			}
			for i := range eff.Notifications {
				eff.Notifications[i].ID = int64(7_000 + i + round)
			}
			q := PrepareChanges([]*Effects{eff}, balances, st.Now)
			got := q.Entries()
			want := ExecChanges([]*Effects{eff}, balances, st.Now)
			if len(got) != len(want) {
				t.Fatalf("round %d: %d entries, want %d", round, len(got), len(want))
			}
			for i := range want {
				if got[i].Type != want[i].Type || got[i].UserID != want[i].UserID || !bytes.Equal(got[i].Data, want[i].Data) {
					t.Fatalf("round %d, entry %d:\n%s\nwant\n%s", round, i, got[i].Data, want[i].Data)
				}
			}
			q.Release()
		}
	})
}
