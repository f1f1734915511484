package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
)

// fakeLog is a market's trade log of n trades, ids 1..n, that counts its
// page reads and fails the reads after failAfter pages when it is set.
type fakeLog struct {
	n, reads, failAfter int
}

func (f *fakeLog) read(ctx context.Context, _, after int64, limit int) ([]*market.Trade, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.reads++
	if f.failAfter > 0 && f.reads > f.failAfter {
		return nil, errors.New("pq: connection reset")
	}
	var out []*market.Trade
	for id := after + 1; id <= int64(f.n) && len(out) < limit; id++ {
		out = append(out, &market.Trade{ID: id, Side: market.Yes, Action: market.ActionBuy, Shares: 100, Amount: 60, Cost: 58, Fee: 2,
			PriceBefore: 0.5, PriceAfter: 0.51, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)})
	}
	return out, nil
}

func exportsOver(f *fakeLog, page int, cacheBytes int64) *tradeExports {
	return &tradeExports{trades: f.read, page: page, cache: newExportCache(cacheBytes)}
}

func TestResolvedTradesFilesAreRenderedOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("a second download is the kept file, without a store read", func(t *testing.T) {
		f := &fakeLog{n: 10}
		x := exportsOver(f, 4, 1<<20)
		first, err := x.resolvedFile(ctx, 7)
		if err != nil || first == nil {
			t.Fatalf("render: %v, %v", first, err)
		}
		if f.reads != 3 {
			t.Fatalf("10 trades in pages of 4 took %d reads, want 3", f.reads)
		}
		if lines := strings.Count(string(first.body), "\n"); lines != 11 {
			t.Fatalf("%d lines, want the header and 10 rows", lines)
		}
		second, err := x.resolvedFile(ctx, 7)
		if err != nil || second != first || f.reads != 3 {
			t.Fatalf("second download: %p (first %p), %v, %d reads", second, first, err, f.reads)
		}
	})

	t.Run("a download whose client has gone still renders the file the others wait for", func(t *testing.T) {
		f := &fakeLog{n: 10}
		x := exportsOver(f, 4, 1<<20)
		gone, cancel := context.WithCancel(ctx)
		cancel()
		got, err := x.resolvedFile(gone, 7)
		if err != nil || got == nil {
			t.Fatalf("render for a client that has gone: %v, %v; want the file", got, err)
		}
		if lines := strings.Count(string(got.body), "\n"); lines != 11 {
			t.Fatalf("%d lines, want the header and 10 rows", lines)
		}
	})

	t.Run("a file larger than a quarter of the cache is not kept", func(t *testing.T) {
		f := &fakeLog{n: 100}
		x := exportsOver(f, 10, 4_000) // 100 rows are some 7 KB; a file may be 1,000 bytes
		got, err := x.resolvedFile(ctx, 7)
		if err != nil || got != nil {
			t.Fatalf("a large file: %v, %v; want none kept", got, err)
		}
		if x.cache.bytes() != 0 {
			t.Fatalf("the cache holds %d bytes", x.cache.bytes())
		}
		if f.reads > 2 {
			t.Errorf("the render read %d pages past the size it keeps", f.reads)
		}
	})
}

func TestExportCacheKeepsItsBytesBound(t *testing.T) {
	ec := newExportCache(1000)
	file := func(id int64, n int) *exportFile {
		return &exportFile{market: id, etag: `"x"`, body: bytes.Repeat([]byte("a"), n)}
	}
	for id := int64(1); id <= 10; id++ {
		ec.put(file(id, 200))
		if ec.bytes() > 1000 {
			t.Fatalf("after %d files the cache holds %d bytes, bound 1000", id, ec.bytes())
		}
	}
	if ec.bytes() != 1000 {
		t.Fatalf("the cache holds %d bytes, want 1000 (five files)", ec.bytes())
	}
	for id, kept := range map[int64]bool{1: false, 5: false, 6: true, 10: true} {
		if got := ec.get(id) != nil; got != kept {
			t.Errorf("market %d kept: %v, want %v", id, got, kept)
		}
	}
	ec.get(6) // now the most recently used
	ec.put(file(11, 200))
	if ec.get(6) == nil || ec.get(7) != nil {
		t.Error("the least recently used file did not go first")
	}
	ec.put(file(12, 251))
	if ec.get(12) != nil {
		t.Error("a file over a quarter of the bound was kept")
	}
}

func TestTradesFileCutShortByAStoreError(t *testing.T) {
	f := &fakeLog{n: 10, failAfter: 2}
	x := exportsOver(f, 3, 1<<20)
	r := x.newReader(context.Background(), 7)
	body, err := io.ReadAll(r)
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("read: %v; want the store's error", err)
	}
	// The header and the two pages read before the error, never half a row.
	if lines := strings.Count(string(body), "\n"); lines != 7 || !strings.HasSuffix(string(body), "\n") {
		t.Fatalf("%d lines before the error:\n%s", lines, body)
	}
}
