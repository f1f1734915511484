package storagetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// The public feed (market.Service.Feed, Store.Feed): search in both
// languages, tags, the four sorts, the status filter and keyset paging.

// feedEvent creates an active event of one pool (live since 2020,
// finishing at finish) with a market per name pair [en, ru].
func (e *env) feedEvent(c *account.User, ne market.NewEvent, finish time.Time, markets ...[2]string) *market.Event {
	e.t.Helper()
	live := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &ne.Pools[0]
	p.Margin, p.B, p.LiveAt, p.FinishAt = 0.02, 100_000, &live, &finish
	for _, m := range markets {
		p.Markets = append(p.Markets, market.NewMarket{Name: m[0], NameRu: m[1], Probability: 0.4})
	}
	ev, err := e.markets.CreateEvent(e.ctx, c, ne)
	if err != nil {
		e.t.Fatalf("create event %q: %v", ne.Name, err)
	}
	if err := e.markets.SetActive(e.ctx, c.ID, ev.ID, ptr(true)); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// feed asks for one page and fails the test on an error.
func (e *env) feed(r market.FeedRequest) *market.FeedPage {
	e.t.Helper()
	p, err := e.markets.Feed(e.ctx, r)
	if err != nil {
		e.t.Fatalf("feed %+v: %v", r, err)
	}
	return p
}

func feedIDs(p *market.FeedPage) []int64 {
	out := []int64{}
	for _, e := range p.Events {
		out = append(out, e.ID)
	}
	return out
}

// searchWorld is three events with texts in both languages.
func (e *env) searchWorld() (final, election, rain *market.Event) {
	c := e.creator()
	finish := time.Now().Add(72 * time.Hour)
	final = e.feedEvent(c, market.NewEvent{Name: "Northside FC final", NameRu: "Финал Нортсайда", Pools: []market.NewPool{{
		Name: "Match winner", NameRu: "Победитель матча",
		Rules: "The official result of the match counts", RulesRu: "Засчитывается официальный результат матча",
	}}}, finish, [2]string{"Northside", "Нортсайд"}, [2]string{"Southbridge", "Саутбридж"})
	election = e.feedEvent(c, market.NewEvent{Name: "Mayor election", NameRu: "Выборы мэра", Pools: []market.NewPool{{
		Name: "Mayor", NameRu: "Мэр", Rules: "Certified count of the commission", RulesRu: "Подсчёт голосов избирательной комиссией",
	}}}, finish, [2]string{"Ivanova", "Иванова"}, [2]string{"Petrov", "Петров"})
	rain = e.feedEvent(c, market.NewEvent{Name: "Rain in Moscow tomorrow", NameRu: "Дождь в Москве завтра", Pools: []market.NewPool{{
		Name: "Rain", NameRu: "Дождь", Rules: "Per the weather service", RulesRu: "По данным метеослужбы",
	}}}, finish, [2]string{"Rain", "Дождь"})
	return final, election, rain
}

func testFeed(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a search finds events by a word of their names, rules or answers in English or Russian", func(t *testing.T) {
		e := newEnv(t, newStores)
		final, election, rain := e.searchWorld()
		cases := []struct {
			q    string
			want []*market.Event
		}{
			{"northside", []*market.Event{final}},
			{"NORTHSIDE Final", []*market.Event{final}},
			{"official northside", []*market.Event{final}}, // rules and name
			{"southbridge", []*market.Event{final}},        // an answer
			{"ivanova", []*market.Event{election}},
			{"Иванова", []*market.Event{election}},
			{"голосов", []*market.Event{election}}, // Russian rules
			{"метеослужбы", []*market.Event{rain}},
			{"elect", []*market.Event{election}}, // the last word as a prefix
			{"выбор", []*market.Event{election}},
			{"rain moscow", []*market.Event{rain}},
			{"northside мэра", nil}, // no event holds both
			{"zzz", nil},
			{"  ,.;  ", []*market.Event{rain, election, final}}, // no words: no search
		}
		for _, c := range cases {
			want := []int64{}
			for _, ev := range c.want {
				want = append(want, ev.ID)
			}
			if got := feedIDs(e.feed(market.FeedRequest{Text: c.q, Sort: market.SortNew})); !slices.Equal(got, want) {
				t.Errorf("search %q = %v, want %v", c.q, got, want)
			}
		}
	})
	t.Run("a search finds an edited name and an answer added later, never a hidden event", func(t *testing.T) {
		e := newEnv(t, newStores)
		final, _, rain := e.searchWorld()
		c := e.creator()
		ev := e.otherEvent(c, 0.02, 100_000, 2, 0.3, 0.3, 0.4)
		if _, err := e.markets.AddAnswer(e.ctx, ev.CreatorID, false, ev.Pools[0].ID, market.NewAnswer{Name: "Zephyrine", NameRu: "Зефирина", Probability: 0.1}); err != nil {
			t.Fatal(err)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "zephyrine"})); !slices.Equal(got, []int64{ev.ID}) {
			t.Errorf("an answer added later: %v, want [%d]", got, ev.ID)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "зефирина"})); !slices.Equal(got, []int64{ev.ID}) {
			t.Errorf("its Russian name: %v, want [%d]", got, ev.ID)
		}
		name := "Westgate derby"
		if _, err := e.markets.EditEvent(e.ctx, final.CreatorID, final.ID, market.EventPatch{Name: &name}); err != nil {
			t.Fatal(err)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "westgate"})); !slices.Equal(got, []int64{final.ID}) {
			t.Errorf("the edited name: %v, want [%d]", got, final.ID)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "northside fc"})); len(got) != 0 {
			t.Errorf("the old name still finds %v", got)
		}
		// New pools replace the old ones: their answers are found, and the
		// event stays open.
		pools := []market.NewPool{{Name: "Winner", Margin: 0.02, B: 100_000, Markets: []market.NewMarket{{Name: "Quillfeather", Probability: 0.5}}}}
		if _, err := e.markets.EditEvent(e.ctx, final.CreatorID, final.ID, market.EventPatch{Pools: &pools}); err != nil {
			t.Fatal(err)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "quillfeather"})); !slices.Equal(got, []int64{final.ID}) {
			t.Errorf("an answer of the new pools: %v, want [%d]", got, final.ID)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "southbridge"})); len(got) != 0 {
			t.Errorf("an answer of the old pools still finds %v", got)
		}
		if err := e.markets.SetActive(e.ctx, rain.CreatorID, rain.ID, ptr(false)); err != nil {
			t.Fatal(err)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Text: "rain"})); len(got) != 0 {
			t.Errorf("a hidden event is found: %v", got)
		}
	})
	t.Run("a tag lists only the events carrying it; a tag nobody carries lists none", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		e.putTag("sport", "Sport", "Спорт")
		e.putTag("politics", "Politics", "Политика")
		a, err1 := e.tagged(c, true, "sport")
		b, err2 := e.tagged(c, true, "politics", "sport")
		_, err3 := e.tagged(c, true, "politics")
		_, err4 := e.tagged(c, false, "sport") // hidden
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Tag: "sport", Sort: market.SortNew})); !slices.Equal(got, []int64{b.ID, a.ID}) {
			t.Errorf("tag sport = %v, want [%d %d]", got, b.ID, a.ID)
		}
		if got := feedIDs(e.feed(market.FeedRequest{Tag: "no-such-tag"})); len(got) != 0 {
			t.Errorf("an unknown tag lists %v", got)
		}
	})
	t.Run("each sort orders the events, with volumes, closing times and sparklines", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		now := time.Now()
		soon, later, latest := now.Add(24*time.Hour), now.Add(48*time.Hour), now.Add(96*time.Hour)
		old := e.feedEvent(c, market.NewEvent{Name: "Old", Pools: []market.NewPool{{Name: "P"}}}, later, [2]string{"A", ""})
		hot := e.feedEvent(c, market.NewEvent{Name: "Hot", Pools: []market.NewPool{{Name: "P"}}}, latest, [2]string{"B", ""})
		quiet := e.feedEvent(c, market.NewEvent{Name: "Quiet", Pools: []market.NewPool{{Name: "P"}}}, soon, [2]string{"C", ""})
		u := e.user("trader", 10_000_000, 0)
		// Old traded a lot two days ago; Hot a little now.
		oldTrades := e.tradeAt(old.Pools[0].Markets[0], nil, now.Add(-50*time.Hour), buyReq(u, market.Yes, 500_000), buyReq(u, market.No, 100_000))
		hotTrades := e.tradeAt(hot.Pools[0].Markets[0], nil, now, buyReq(u, market.Yes, 30_000))
		sum := func(ts []*market.Trade) (n int64) {
			for _, tr := range ts {
				n += tr.Amount
			}
			return n
		}
		order := map[string][]int64{
			market.SortNew:      {quiet.ID, hot.ID, old.ID},
			market.SortTrending: {hot.ID, quiet.ID, old.ID}, // untraded today: newest first
			market.SortVolume:   {old.ID, hot.ID, quiet.ID},
			market.SortClosing:  {quiet.ID, old.ID, hot.ID},
		}
		for sort, want := range order {
			p := e.feed(market.FeedRequest{Sort: sort})
			if got := feedIDs(p); !slices.Equal(got, want) {
				t.Errorf("sort %s = %v, want %v", sort, got, want)
			}
		}
		p := e.feed(market.FeedRequest{Sort: market.SortNew})
		stats := map[int64]*market.Event{}
		for _, ev := range p.Events {
			stats[ev.ID] = ev
		}
		check := func(ev *market.Event, volume, day int64, closes time.Time) {
			t.Helper()
			st := stats[ev.ID].Stats
			if st.Volume != volume || st.Volume24h != day || !within(st.ClosesAt, closes) {
				t.Errorf("%s: stats %+v, want volume %d, 24h %d, closes %s", ev.Name, st, volume, day, closes)
			}
		}
		check(old, sum(oldTrades), 0, later)
		check(hot, sum(hotTrades), sum(hotTrades), latest)
		check(quiet, 0, 0, soon)
		for _, ev := range p.Events {
			m := ev.Pools[0].Markets[0]
			n := len(m.Sparkline)
			if n < 1 || n > market.SparklineHours {
				t.Fatalf("%s: sparkline of %d points", ev.Name, n)
			}
			if last := m.Sparkline[n-1]; last != m.YesProbability() {
				t.Errorf("%s: the sparkline ends at %v, the price is %v", ev.Name, last, m.YesProbability())
			}
		}
		// Old traded before the window: every point is its price since.
		if sp := stats[old.ID].Pools[0].Markets[0].Sparkline; sp[0] != sp[len(sp)-1] {
			t.Errorf("old's sparkline moved without a trade: %v", sp)
		}
	})
	t.Run("the status filter lists open, resolved or all events", func(t *testing.T) {
		e := newEnv(t, newStores)
		final, election, rain := e.searchWorld()
		if err := e.markets.Resolve(e.ctx, final.Pools[0].Markets[0].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		// One of election's two markets: it stays open.
		if err := e.markets.Resolve(e.ctx, election.Pools[0].Markets[0].ID, "NO"); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Resolve(e.ctx, final.Pools[0].Markets[1].ID, "NO"); err != nil {
			t.Fatal(err)
		}
		for status, want := range map[string][]int64{
			"":                  {rain.ID, election.ID},
			market.FeedOpen:     {rain.ID, election.ID},
			market.FeedResolved: {final.ID},
			market.FeedAll:      {rain.ID, election.ID, final.ID},
		} {
			if got := feedIDs(e.feed(market.FeedRequest{Status: status, Sort: market.SortNew})); !slices.Equal(got, want) {
				t.Errorf("status %q = %v, want %v", status, got, want)
			}
		}
	})
	t.Run("pages follow one another with the cursor, each event once, whatever is created between", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		u := e.user("trader", 10_000_000, 0)
		now := time.Now()
		var evs []*market.Event
		for i := range 7 {
			ev := e.feedEvent(c, market.NewEvent{Name: "Event " + itoa(i), Pools: []market.NewPool{{Name: "P"}}},
				now.Add(time.Duration(24+i%3)*time.Hour), [2]string{"A", ""})
			if i%2 == 0 { // some with equal volumes, to tie
				e.tradeAt(ev.Pools[0].Markets[0], nil, now, buyReq(u, market.Yes, 10_000))
			}
			evs = append(evs, ev)
		}
		for _, sort := range []string{market.SortTrending, market.SortClosing, market.SortVolume, market.SortNew} {
			whole := feedIDs(e.feed(market.FeedRequest{Sort: sort, Limit: 100}))
			if len(whole) != len(evs) {
				t.Fatalf("sort %s lists %d events, want %d", sort, len(whole), len(evs))
			}
			var walked []int64
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 5 {
					t.Fatalf("sort %s: the cursor never ends", sort)
				}
				p := e.feed(market.FeedRequest{Sort: sort, Limit: 3, Cursor: cursor})
				walked = append(walked, feedIDs(p)...)
				if pages == 0 && sort == market.SortNew {
					e.feedEvent(c, market.NewEvent{Name: "Late", Pools: []market.NewPool{{Name: "P"}}}, now.Add(time.Hour), [2]string{"A", ""})
				}
				if p.Next == "" {
					break
				}
				cursor = p.Next
			}
			if !slices.Equal(walked, whole) {
				t.Errorf("sort %s: paged through %v, want %v", sort, walked, whole)
			}
		}
		// The old paging still works.
		if got := feedIDs(e.feed(market.FeedRequest{Sort: market.SortNew, Limit: 2, Offset: 1})); len(got) != 2 {
			t.Errorf("limit 2, offset 1: %v", got)
		}
	})
	t.Run("a bad sort, status, tag, cursor or text is invalid input", func(t *testing.T) {
		e := newEnv(t, newStores)
		good := market.FeedCursor{Sort: market.SortNew, ID: 5}.Encode()
		for _, r := range []market.FeedRequest{
			{Sort: "hot"}, {Status: "closed"}, {Tag: "Not A Slug"}, {Cursor: "not base64!"}, {Cursor: "YWJj"},
			{Sort: market.SortVolume, Cursor: good}, // another sort's cursor
			{Cursor: good, Offset: 2, Sort: market.SortNew},
			{Text: "a\x00b"}, {Text: string(make([]byte, market.MaxFeedQueryLen+1))},
		} {
			if _, err := e.markets.Feed(e.ctx, r); !errors.Is(err, input.ErrInvalid) {
				t.Errorf("Feed(%+v) = %v, want invalid input", r, err)
			}
		}
	})
}
