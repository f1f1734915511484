package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// seedTrades makes a market with buys and sells of both sides, a market
// beside it with a trade, and returns the first market's id.
func seedTrades(t *testing.T, store server.Store) int64 {
	t.Helper()
	ctx := context.Background()
	acc := account.NewService(store)
	acc.BcryptCost = bcrypt.MinCost
	mk := market.NewService(store, acc)
	user := func(name string) *account.User {
		u, _, err := acc.Register(ctx, account.Registration{Email: name + "@example.com", Password: "password123", Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := acc.Credit(ctx, u.ID, 1_000_000, false); err != nil {
			t.Fatal(err)
		}
		return u
	}
	creator, ann, bob := user("creator"), user("ann"), user("bob")
	yes := true
	creator, err := acc.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := mk.CreateEvent(ctx, creator, market.NewEvent{Name: "Final", NameRu: "Финал", Pools: []market.NewPool{{
		Name: "Winner", NameRu: "Победитель", Rules: "Official result", Margin: 0.02, B: 100_000,
		Markets: []market.NewMarket{{Name: "Home", Probability: 0.5}, {Name: "Away", Probability: 0.3}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mk.SetActive(ctx, creator.ID, ev.ID, &yes); err != nil {
		t.Fatal(err)
	}
	m, beside := ev.Pools[0].Markets[0].ID, ev.Pools[0].Markets[1].ID
	for _, r := range []struct {
		u      *account.User
		market int64
		side   market.Side
		action market.Action
		n      int64
	}{
		{ann, m, market.Yes, market.ActionBuy, 10_000},
		{bob, m, market.No, market.ActionBuy, 8_000},
		{ann, beside, market.No, market.ActionBuy, 5_000},
		{bob, m, market.Yes, market.ActionBuy, 3_000},
		{ann, m, market.Yes, market.ActionSell, 2_000},
		{bob, m, market.No, market.ActionSell, 1_000},
		{ann, m, market.No, market.ActionBuy, 4_000},
		{bob, m, market.Yes, market.ActionBuy, 6_000},
	} {
		q := market.Request{UserID: r.u.ID, Side: r.side, Action: r.action}
		if r.action == market.ActionBuy {
			q.Amount = r.n
		} else {
			q.Shares = r.n
		}
		if _, err := mk.Execute(ctx, r.market, q); err != nil {
			t.Fatalf("%s %s %d on market %d: %v", r.action, r.side, r.n, r.market, err)
		}
	}
	return m
}

// export runs `predictkit export` with args.
func export(args ...string) (code int, stdout []byte, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"export"}, args...), &out, &errb)
	return code, out.Bytes(), errb.String()
}

func TestExport(t *testing.T) {
	defer func(n int) { exportRowGroup = n }(exportRowGroup)
	exportRowGroup = 3 // seven trades make three row groups
	for _, sc := range []struct {
		name  string
		store func(t *testing.T) server.Store
	}{
		{"memory", func(*testing.T) server.Store { return memory.New() }},
		{"postgres", func(t *testing.T) server.Store { return pgtest.New(t) }},
	} {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.store(t)
			id := seedTrades(t, store)
			base := adminServerWith(t, func(c *server.Config) { c.Store = store; c.ExportPageSize = 2 })
			want, err := store.Trades(context.Background(), id)
			if err != nil || len(want) != 7 {
				t.Fatalf("the market's trades: %d, %v; want 7", len(want), err)
			}
			res, err := http.Get(base + "/api/v1/markets/" + strconv.FormatInt(id, 10) + "/trades.csv")
			if err != nil {
				t.Fatal(err)
			}
			served, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("GET the file: %d, %v", res.StatusCode, err)
			}
			dir := t.TempDir()

			t.Run("csv to standard output is the server's bytes", func(t *testing.T) {
				code, out, errOut := export("-market", strconv.FormatInt(id, 10), "-url", base)
				if code != 0 || !bytes.Equal(out, served) {
					t.Fatalf("exit %d, %s\n%s\nwant the server's\n%s", code, errOut, out, served)
				}
				rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
				if err != nil || len(rows) != 1+len(want) {
					t.Fatalf("%d rows, %v; want a header and %d", len(rows), err, len(want))
				}
			})

			t.Run("csv to a file given with -server is the server's bytes", func(t *testing.T) {
				name := filepath.Join(dir, "trades.csv")
				if code, _, errOut := export("-market", strconv.FormatInt(id, 10), "-server", base, "-o", name); code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, served) {
					t.Fatalf("the file differs from the server's (%v)", err)
				}
			})

			t.Run("parquet read back holds every trade, value by value, in row groups", func(t *testing.T) {
				name := filepath.Join(dir, "trades.parquet")
				if code, _, errOut := export("-market", strconv.FormatInt(id, 10), "-url", base, "-format", "parquet", "-o", name); code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				rows, err := parquet.ReadFile[TradeRow](name)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != len(want) {
					t.Fatalf("%d rows, want %d", len(rows), len(want))
				}
				for i, tr := range want {
					w := TradeRow{TradeID: tr.ID, Time: tr.CreatedAt.UTC().Truncate(time.Microsecond), Side: tr.Side.String(), Action: string(tr.Action),
						Shares: tr.Shares, AmountKopecks: tr.Amount, FeeKopecks: tr.Fee, LMSRCostKopecks: tr.Cost,
						YesProbabilityBefore: tr.PriceBefore, YesProbabilityAfter: tr.PriceAfter}
					got := rows[i]
					if !got.Time.Equal(w.Time) || got.Time.Location() != time.UTC {
						t.Errorf("row %d: time %v, want %v in UTC", i, got.Time, w.Time)
					}
					got.Time = w.Time
					if got != w {
						t.Errorf("row %d:\n got %+v\nwant %+v", i, got, w)
					}
				}
				f, err := os.Open(name)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				st, _ := f.Stat()
				pf, err := parquet.OpenFile(f, st.Size())
				if err != nil {
					t.Fatal(err)
				}
				if n := len(pf.RowGroups()); n != 3 {
					t.Errorf("%d row groups, want 3 of at most 3 trades", n)
				}
				types := map[string]string{}
				for _, c := range pf.Schema().Fields() {
					types[c.Name()] = c.Type().String()
				}
				for col, typ := range map[string]string{
					// Signed 64-bit integers.
					"trade_id": "INT(64,true)", "shares": "INT(64,true)", "amount_kopecks": "INT(64,true)", "fee_kopecks": "INT(64,true)",
					"lmsr_cost_kopecks": "INT(64,true)",
					"time":              "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)", "side": "STRING", "action": "STRING",
					"yes_probability_before": "DOUBLE", "yes_probability_after": "DOUBLE",
				} {
					if types[col] != typ {
						t.Errorf("column %s is %s, want %s", col, types[col], typ)
					}
				}
			})
		})
	}
}

func TestExportRefusals(t *testing.T) {
	base := adminServer(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no market is a usage error", []string{"-url", base}, 2, "give the market's id: -market ID"},
		{"a format other than csv or parquet is a usage error", []string{"-market", "1", "-format", "xlsx"}, 2, `-format "xlsx": must be csv or parquet`},
		{"parquet to standard output is a usage error", []string{"-market", "1", "-format", "parquet"}, 2, "-format parquet needs -o FILE"},
		{"a URL without a scheme is a usage error", []string{"-market", "1", "-url", "127.0.0.1:8080"}, 2, "must be an http or https URL"},
		{"an operand is a usage error", []string{"-market", "1", "extra"}, 2, `unexpected arguments ["extra"]`},
		{"an unknown market is the server's 404", []string{"-market", "424242", "-url", base}, 1, "the server answered 404 market_not_found"},
		{"an unknown market leaves no file", []string{"-market", "424242", "-url", base, "-o", filepath.Join(dir, "none.csv")}, 1, "404 market_not_found"},
		{"a server that does not answer is said", []string{"-market", "1", "-url", "http://127.0.0.1:1"}, 1, "cannot reach the server at http://127.0.0.1:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := export(c.args...)
			if code != c.code || !strings.Contains(errOut, c.stderr) || len(out) != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d saying %q", code, out, errOut, c.code, c.stderr)
			}
			if lines := strings.Count(strings.TrimSpace(errOut), "\n"); lines != 0 {
				t.Errorf("stderr has %d lines, want one", lines+1)
			}
		})
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused export left %d files", len(left))
	}
}
