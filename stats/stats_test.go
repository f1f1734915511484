package stats_test

import (
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/stats"
)

func day(s string) time.Time {
	t, err := time.Parse(stats.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseRange(t *testing.T) {
	today := time.Date(2026, 12, 2, 23, 59, 0, 0, time.FixedZone("MSK", 3*3600)) // 20:59 UTC
	for _, c := range []struct {
		name, from, to   string
		wantFrom, wantTo string
		field            string // of the error; "" when valid
	}{
		{"no bounds are the 30 days ending today (UTC)", "", "", "2026-11-03", "2026-12-02", ""},
		{"only to ends there", "", "2026-03-31", "2026-03-02", "2026-03-31", ""},
		{"only from runs to today", "2026-12-01", "", "2026-12-01", "2026-12-02", ""},
		{"one day is a range", "2026-05-05", "2026-05-05", "2026-05-05", "2026-05-05", ""},
		{"a leap year's 366 days are a range", "2024-01-01", "2024-12-31", "2024-01-01", "2024-12-31", ""},
		{"367 days are too many", "2024-01-01", "2025-01-01", "", "", "to"},
		{"from after to is reversed", "2026-03-02", "2026-03-01", "", "", "from"},
		{"a day that does not exist is a bad date", "2026-02-30", "", "", "", "from"},
		{"a date and time is a bad date", "", "2026-01-01T00:00:00Z", "", "", "to"},
		{"an unpadded date is a bad date", "2026-1-1", "2026-01-31", "", "", "from"},
		{"a year before 1970 is refused", "1969-12-31", "1970-01-01", "", "", "from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, to, err := stats.ParseRange(c.from, c.to, today)
			if c.field != "" {
				var ie *input.Error
				if !errors.As(err, &ie) || ie.Field != c.field || !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("err %v; want an input error of %s", err, c.field)
				}
				return
			}
			if err != nil || !from.Equal(day(c.wantFrom)) || !to.Equal(day(c.wantTo)) {
				t.Fatalf("%s..%s, %v; want %s..%s", from, to, err, c.wantFrom, c.wantTo)
			}
		})
	}
}

func TestFill(t *testing.T) {
	got := []stats.Day{
		{Date: day("2026-01-02"), Trades: 2, OpenInterest: 700},
		{Date: day("2026-01-04"), NewUsers: 1, OpenInterest: 300},
	}
	days := stats.Fill(day("2026-01-01"), day("2026-01-05"), 500, got)
	want := []struct {
		date   string
		trades int64
		open   int64
	}{{"2026-01-01", 0, 500}, {"2026-01-02", 2, 700}, {"2026-01-03", 0, 700}, {"2026-01-04", 0, 300}, {"2026-01-05", 0, 300}}
	if len(days) != len(want) {
		t.Fatalf("%d days, want %d", len(days), len(want))
	}
	for i, w := range want {
		if d := days[i]; d.Date.Format(stats.DateLayout) != w.date || d.Trades != w.trades || d.OpenInterest != w.open {
			t.Errorf("day %d is %+v, want %+v", i, d, w)
		}
	}
	if days[3].NewUsers != 1 {
		t.Errorf("the stored day lost its figures: %+v", days[3])
	}
}

func TestMoney(t *testing.T) {
	for _, c := range []struct {
		name    string
		typ     changelog.Type
		data    string
		ok      bool
		day     string
		dep, wd int64
	}{
		{"a credited deposit counts on its crediting day", changelog.Deposit,
			`{"id":1,"amount_kopecks":1250,"status":"credited","created_at":"2026-01-01T23:00:00Z","credited_at":"2026-01-02T00:10:00Z"}`, true, "2026-01-02", 1250, 0},
		{"a pending deposit counts nothing", changelog.Deposit, `{"id":1,"amount_kopecks":1250,"status":"pending","credited_at":null}`, false, "", 0, 0},
		{"a paid withdrawal counts on its payment day", changelog.Withdrawal,
			`{"id":2,"amount_kopecks":20000,"status":"paid","created_at":"2026-01-01T10:00:00Z","decided_at":"2026-01-03T09:00:00.123456Z"}`, true, "2026-01-03", 0, 20000},
		{"a cancelled withdrawal counts nothing", changelog.Withdrawal, `{"id":2,"amount_kopecks":20000,"status":"cancelled","decided_at":"2026-01-03T09:00:00Z"}`, false, "", 0, 0},
		{"a requested withdrawal counts nothing", changelog.Withdrawal, `{"id":2,"amount_kopecks":20000,"status":"pending","decided_at":null}`, false, "", 0, 0},
		{"a trade entry is none of them", changelog.Trade, `{"trade_id":3,"status":"paid","amount_kopecks":5}`, false, "", 0, 0},
		{"malformed data counts nothing", changelog.Deposit, `{"status":`, false, "", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, dep, wd, ok := stats.Money(c.typ, []byte(c.data))
			if ok != c.ok || dep != c.dep || wd != c.wd || ok && !d.Equal(day(c.day)) {
				t.Fatalf("%s %d %d %v; want %s %d %d %v", d, dep, wd, ok, c.day, c.dep, c.wd, c.ok)
			}
		})
	}
}
