package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/singleflight"

	"github.com/predictkit/predictkit/market"
)

// The trades export: GET /markets/{market_id}/trades.csv, every trade of
// a market for anyone (docs/market-data.md).
const (
	// DefaultExportPageSize is how many trades the export reads from the
	// store at a time: all it holds of a market in memory while it
	// streams.
	DefaultExportPageSize = 5000
	// DefaultExportCacheBytes bounds the resolved markets' files kept in
	// memory.
	DefaultExportCacheBytes = 64 << 20
	// exportPageTimeout bounds each page's read once the answer streams,
	// past the request's own deadline.
	exportPageTimeout = 10 * time.Second
	// exportRenderTimeout bounds the render of a resolved market's file
	// for the cache, which outlives the request that started it.
	exportRenderTimeout = time.Minute
)

// TradesCSVHeader is the header row of a market's trades file, its
// columns in order.
var TradesCSVHeader = []string{"trade_id", "time", "side", "action", "shares", "amount_kopecks", "fee_kopecks",
	"lmsr_cost_kopecks", "yes_probability_before", "yes_probability_after"}

// GET /markets/{market_id}/trades.csv. Checks run 400 invalid_id
// (common), 404 market_not_found. Errors after the first page are past
// the status line: the answer is cut short (no last chunk), which a
// client sees as a failed download.
var errsTradesCSV = table("internal_error",
	on(market.ErrMarketNotFound, http.StatusNotFound, "market_not_found"),
)

// tradeExports serves the trades files: resolved markets' from the
// cache, open markets' streamed fresh a page at a time.
type tradeExports struct {
	markets *market.Service
	// trades reads a page of a market's trade log: the service's
	// TradesAfter.
	trades  func(ctx context.Context, marketID, after int64, limit int) ([]*market.Trade, error)
	page    int
	cache   *exportCache
	renders singleflight.Group
	log     *slog.Logger
}

func exportRoutes(cfg Config, markets *market.Service, log *slog.Logger) RoutesOut {
	x := &tradeExports{markets: markets, trades: markets.TradesAfter, page: cfg.ExportPageSize, log: log}
	if x.page <= 0 {
		x.page = DefaultExportPageSize
	}
	size := cfg.ExportCacheBytes
	if size <= 0 {
		size = DefaultExportCacheBytes
	}
	x.cache = newExportCache(size)
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id/trades.csv", Errors: errsTradesCSV, Handler: x.handle},
	}}
}

// handle answers a market's trades as CSV.
func (x *tradeExports) handle(c *fiber.Ctx) error {
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	m, err := x.markets.Market(ctx, id)
	if err != nil {
		return err
	}
	if m.Resolved {
		f, err := x.resolvedFile(ctx, id)
		if err != nil {
			return err
		}
		if f != nil {
			fileHeaders(c, id, true)
			c.Set(fiber.HeaderETag, f.etag)
			if etagMatch(c.Get(fiber.HeaderIfNoneMatch), f.etag) {
				return c.SendStatus(http.StatusNotModified)
			}
			return c.Send(f.body)
		}
		// Too large to keep: streamed like an open market's.
	}
	r := x.newReader(ctx, id)
	// The first page is read before the status line, so that its error
	// is an error answer.
	if err := r.fill(ctx); err != nil {
		return err
	}
	fileHeaders(c, id, false)
	// The request's deadline ends with the handler; each later page gets
	// its own.
	r.ctx = context.WithoutCancel(ctx)
	c.Context().SetBodyStream(r, -1)
	return nil
}

// fileHeaders sets the headers of a trades file: its type and name, and
// whether a cache may keep it (a resolved market's, revalidated with its
// ETag).
func fileHeaders(c *fiber.Ctx, id int64, resolved bool) {
	h := &c.Response().Header
	h.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(fiber.HeaderContentDisposition, `attachment; filename="market-`+strconv.FormatInt(id, 10)+`-trades.csv"`)
	if len(h.Peek(fiber.HeaderCacheControl)) > 0 { // a request with credentials is no-store (headerPolicy)
		return
	}
	if resolved {
		h.Set(fiber.HeaderCacheControl, "public, no-cache")
	} else {
		h.Set(fiber.HeaderCacheControl, "no-cache")
	}
}

// resolvedFile returns resolved market id's file from the cache, or
// renders it once for concurrent requests; nil when it is larger than
// the cache keeps.
func (x *tradeExports) resolvedFile(ctx context.Context, id int64) (*exportFile, error) {
	if f := x.cache.get(id); f != nil {
		return f, nil
	}
	v, err, _ := x.renders.Do(strconv.FormatInt(id, 10), func() (any, error) {
		if f := x.cache.get(id); f != nil {
			return f, nil
		}
		// The render is shared by every download that waits for it, so
		// the first client's leaving must not end it: it has a deadline
		// of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exportRenderTimeout)
		defer cancel()
		r := x.newReader(rctx, id)
		var b bytes.Buffer
		_, err := io.Copy(&cappedWriter{w: &b, left: x.cache.maxFile()}, r)
		if errors.Is(err, errTooLarge) {
			return (*exportFile)(nil), nil
		}
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b.Bytes())
		f := &exportFile{market: id, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, body: b.Bytes()}
		x.cache.put(f)
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*exportFile), nil
}

// errTooLarge stops the render of a file the cache would not keep.
var errTooLarge = errors.New("server: trades file larger than the export cache keeps")

// cappedWriter writes to w until left bytes are spent, then fails with
// errTooLarge.
type cappedWriter struct {
	w    io.Writer
	left int64
}

func (cw *cappedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > cw.left {
		return 0, errTooLarge
	}
	cw.left -= int64(len(p))
	return cw.w.Write(p)
}

func (x *tradeExports) newReader(ctx context.Context, id int64) *tradeCSV {
	r := &tradeCSV{market: id, page: x.page, read: x.trades, ctx: ctx, log: x.log}
	r.w = csv.NewWriter(&r.buf)
	_ = r.w.Write(TradesCSVHeader)
	r.w.Flush()
	return r
}

// tradeCSV is a market's trades file as an io.Reader: it reads a page of
// trades from the store whenever the rows it rendered are all read, so it
// holds one page at a time, whatever the market's size.
type tradeCSV struct {
	market int64
	page   int
	read   func(ctx context.Context, marketID, after int64, limit int) ([]*market.Trade, error)
	// ctx is what later pages are read under (each with its own
	// timeout).
	ctx context.Context
	log *slog.Logger

	after int64 // the last trade rendered
	done  bool
	buf   bytes.Buffer
	w     *csv.Writer
	row   []string
}

func (r *tradeCSV) Read(p []byte) (int, error) {
	for r.buf.Len() == 0 {
		if r.done {
			return 0, io.EOF
		}
		ctx, cancel := context.WithTimeout(r.ctx, exportPageTimeout)
		err := r.fill(ctx)
		cancel()
		if err != nil {
			if r.log != nil {
				r.log.Error("trades export cut short", "market_id", r.market, "after_trade_id", r.after, "error", err)
			}
			return 0, err
		}
	}
	return r.buf.Read(p)
}

// fill renders the next page of trades into buf.
func (r *tradeCSV) fill(ctx context.Context) error {
	ts, err := r.read(ctx, r.market, r.after, r.page)
	if err != nil {
		return err
	}
	for _, t := range ts {
		r.row = append(r.row[:0],
			strconv.FormatInt(t.ID, 10),
			t.CreatedAt.UTC().Format(exportTimeLayout),
			t.Side.String(),
			string(t.Action),
			strconv.FormatInt(t.Shares, 10),
			strconv.FormatInt(t.Amount, 10),
			strconv.FormatInt(t.Fee, 10),
			strconv.FormatInt(t.Cost, 10),
			strconv.FormatFloat(t.PriceBefore, 'g', -1, 64),
			strconv.FormatFloat(t.PriceAfter, 'g', -1, 64),
		)
		if err := r.w.Write(r.row); err != nil {
			return err
		}
		r.after = t.ID
	}
	r.w.Flush()
	r.done = len(ts) < r.page
	return r.w.Error()
}

// exportTimeLayout is a trade's time in the file: RFC 3339 in UTC to the
// microsecond, the precision PostgreSQL keeps, always six digits so that
// the column sorts as text.
const exportTimeLayout = "2006-01-02T15:04:05.000000Z"
