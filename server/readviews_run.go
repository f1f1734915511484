package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.uber.org/fx"
)

// warmViews are the reads rendered before the server listens, so that
// its first readers do not all miss: the feed's first page, the latest
// trades and the leaderboard's first page.
var warmViews = []string{"/api/v1/events", "/api/v1/market/trades/latest", "/api/v1/leaderboard"}

// runReadViews follows the change log for the views from start to stop,
// and warms them before the server listens. Without a change log, or
// with the views off, every read is rendered.
func runReadViews(lc fx.Lifecycle, v *readViews, app *fiber.App) {
	if v.log == nil || v.ttl <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(start context.Context) error {
			b, err := v.log.ChangeBounds(start)
			if err != nil {
				v.logger.Warn("read views: the change log cannot be read; reads go to the store until it can", "err", err)
				wg.Go(func() { v.follow(ctx, -1) })
				return nil
			}
			v.restart(b.Last)
			wg.Go(func() { v.follow(ctx, b.Last) })
			warm(app)
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// follow applies the change log to the views from after on (-1: from its
// end once it can be read) until ctx is done. While the log cannot be
// followed, the views stand aside: every read is rendered.
func (v *readViews) follow(ctx context.Context, after int64) {
	for {
		if after >= 0 {
			err := v.log.ChangeFeed().Follow(ctx, after, v.apply)
			v.stand()
			if ctx.Err() != nil {
				return
			}
			v.logger.Warn("read views: following the change log failed; reads go to the store until it is followed again", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		b, err := v.log.ChangeBounds(ctx)
		if err != nil {
			after = -1
			continue
		}
		after = b.Last
		v.restart(after)
	}
}

// stand stops serving views from memory until restart.
func (v *readViews) stand() {
	v.following.Store(false)
	v.touchAll()
}

// warmingUp marks, as a user value of the request (which no client can
// set), the GETs the server makes itself to warm the views: the access
// log and the request metrics leave them out.
type warmingUp struct{}

// warm renders the warmViews through the app, as a client's GET would.
func warm(app *fiber.App) {
	h := app.Handler()
	for _, path := range warmViews {
		var c fasthttp.RequestCtx
		c.SetUserValue(warmingUp{}, true)
		c.Request.Header.SetMethod(http.MethodGet)
		c.Request.SetRequestURI(path)
		h(&c)
	}
}
