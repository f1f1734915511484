package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/predictkit/predictkit/client"
)

const exportUsage = `Usage: predictkit export -market ID [-format csv|parquet] [-o FILE] [-url URL]

Downloads every trade of a market from a running server
(GET /api/v1/markets/{id}/trades.csv, open to anyone: no token) and
writes it as CSV, the server's bytes as they come, or as Parquet, with
typed columns, written a row group at a time as the CSV arrives. The
columns are those of docs/market-data.md. The server is -url (env
PREDICTKIT_URL, default http://127.0.0.1:8080); -server is the same flag.

CSV goes to standard output without -o, or with -o -. Parquet needs -o:
it is a binary file, written beside FILE and renamed into place once
whole, so a failed download leaves no half file.

Exit status: 0 on success, 1 when the server refuses or cannot be
reached, 2 for bad usage.

Flags:
`

// exportRowGroup is how many trades a Parquet row group holds: what the
// command keeps in memory at most, whatever the market's size.
var exportRowGroup = 50_000

// exportOptions are the parsed flags of predictkit export.
type exportOptions struct {
	market int64
	format string
	out    string
	base   string
}

// exportCmd is `predictkit export`.
func exportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseExportArgs(args, os.LookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if err := runExport(ctx, opts, stdout); err != nil {
		fmt.Fprintf(stderr, "predictkit export: %s\n", oneLine(err.Error()))
		return 1
	}
	return 0
}

// parseExportArgs parses the flags of predictkit export; lookup reads
// PREDICTKIT_URL. A problem is one line on stderr.
func parseExportArgs(args []string, lookup func(string) (string, bool), stderr io.Writer) (exportOptions, error) {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := "http://127.0.0.1:8080"
	if v, ok := lookup("PREDICTKIT_URL"); ok && strings.TrimSpace(v) != "" {
		base = strings.TrimSpace(v)
	}
	var o exportOptions
	fs.Int64Var(&o.market, "market", 0, "the market's `id` (required)")
	fs.StringVar(&o.format, "format", "csv", "csv or parquet")
	fs.StringVar(&o.out, "o", "", "write to `FILE` (- or none: standard output, csv only)")
	fs.StringVar(&base, "url", base, "base `URL` of the server (env PREDICTKIT_URL)")
	fs.StringVar(&base, "server", base, "the same as -url")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), exportUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exportOptions{}, err
	}
	fail := func(format string, a ...any) (exportOptions, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "predictkit export: %v\n", err)
		return exportOptions{}, err
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected arguments %q", fs.Args())
	case o.market <= 0:
		return fail("give the market's id: -market ID")
	case o.format != "csv" && o.format != "parquet":
		return fail("-format %q: must be csv or parquet", o.format)
	case o.format == "parquet" && (o.out == "" || o.out == "-"):
		return fail("-format parquet needs -o FILE: Parquet is not written to standard output")
	}
	var err error
	if o.base, err = serverBase(base); err != nil {
		return fail("%v", err)
	}
	return o, nil
}

// runExport downloads the file and writes it where opts say.
func runExport(ctx context.Context, opts exportOptions, stdout io.Writer) error {
	api, err := client.NewClient(opts.base, client.WithHTTPClient(&http.Client{
		// The file may take long to arrive, but its first bytes may not.
		Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second},
	}))
	if err != nil {
		return err
	}
	res, err := api.MarketTradesCSV(ctx, opts.market, nil)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("cannot reach the server at %s: %v", opts.base, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, err := client.Check(client.ParseMarketTradesCSVResponse(res))
		var refused *client.APIError
		if errors.As(err, &refused) {
			return apiError{refused}
		}
		return fmt.Errorf("the server answered %s", res.Status)
	}
	if opts.out == "" || opts.out == "-" {
		if _, err := io.Copy(stdout, res.Body); err != nil {
			return fmt.Errorf("download: %v", err)
		}
		return nil
	}
	return writeAtomically(opts.out, func(w io.Writer) error {
		if opts.format == "parquet" {
			return csvToParquet(res.Body, w)
		}
		if _, err := io.Copy(w, res.Body); err != nil {
			return fmt.Errorf("download: %v", err)
		}
		return nil
	})
}

// writeAtomically writes name through write into a temporary file beside
// it, renamed into place only when write and the close succeed.
func writeAtomically(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// A file anyone may read, as os.Create makes it (CreateTemp's is the
	// owner's alone).
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	done = true
	if err := os.Rename(f.Name(), name); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// TradeRow is one trade of a market's Parquet file, its columns those of
// the CSV file with their types: kopecks and ids int64, the time a UTC
// timestamp in microseconds, probabilities double.
type TradeRow struct {
	TradeID              int64     `parquet:"trade_id"`
	Time                 time.Time `parquet:"time,timestamp(microsecond:utc)"`
	Side                 string    `parquet:"side,dict"`
	Action               string    `parquet:"action,dict"`
	Shares               int64     `parquet:"shares"`
	AmountKopecks        int64     `parquet:"amount_kopecks"`
	FeeKopecks           int64     `parquet:"fee_kopecks"`
	LMSRCostKopecks      int64     `parquet:"lmsr_cost_kopecks"`
	YesProbabilityBefore float64   `parquet:"yes_probability_before"`
	YesProbabilityAfter  float64   `parquet:"yes_probability_after"`
}

// tradeColumns are the CSV columns TradeRow reads, by name: a column the
// server adds later is skipped, one it lacks is an error.
var tradeColumns = []string{"trade_id", "time", "side", "action", "shares", "amount_kopecks", "fee_kopecks",
	"lmsr_cost_kopecks", "yes_probability_before", "yes_probability_after"}

// csvToParquet reads a trades file and writes it to w as Parquet, a row
// group of exportRowGroup trades at a time.
func csvToParquet(r io.Reader, w io.Writer) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("read the header: %v", err)
	}
	at := map[string]int{}
	for i, name := range header {
		at[name] = i
	}
	idx := make([]int, len(tradeColumns))
	for i, name := range tradeColumns {
		j, ok := at[name]
		if !ok {
			return fmt.Errorf("the server's file has no %s column", name)
		}
		idx[i] = j
	}
	pw := parquet.NewGenericWriter[TradeRow](w, parquet.MaxRowsPerRowGroup(int64(exportRowGroup)))
	rows := make([]TradeRow, 0, exportRowGroup)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		if _, err := pw.Write(rows); err != nil {
			return err
		}
		rows = rows[:0]
		return pw.Flush()
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("download: %v", err)
		}
		row, err := tradeRow(rec, idx)
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		if rows = append(rows, row); len(rows) == exportRowGroup {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return pw.Close()
}

// tradeRow reads one CSV record, its columns at idx in tradeColumns'
// order.
func tradeRow(rec []string, idx []int) (TradeRow, error) {
	var row TradeRow
	var err error
	field := func(i int) string {
		if idx[i] >= len(rec) {
			return ""
		}
		return rec[idx[i]]
	}
	ints := []*int64{&row.TradeID, nil, nil, nil, &row.Shares, &row.AmountKopecks, &row.FeeKopecks, &row.LMSRCostKopecks}
	for i, p := range ints {
		if p == nil {
			continue
		}
		if *p, err = strconv.ParseInt(field(i), 10, 64); err != nil {
			return row, fmt.Errorf("%s %q is not an integer", tradeColumns[i], field(i))
		}
	}
	if row.Time, err = time.Parse(time.RFC3339Nano, field(1)); err != nil {
		return row, fmt.Errorf("time %q is not an RFC 3339 time", field(1))
	}
	row.Time = row.Time.UTC()
	row.Side, row.Action = field(2), field(3)
	if row.YesProbabilityBefore, err = strconv.ParseFloat(field(8), 64); err != nil {
		return row, fmt.Errorf("yes_probability_before %q is not a number", field(8))
	}
	if row.YesProbabilityAfter, err = strconv.ParseFloat(field(9), 64); err != nil {
		return row, fmt.Errorf("yes_probability_after %q is not a number", field(9))
	}
	return row, nil
}
