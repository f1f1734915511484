package server

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/market"
)

// GET /markets/{market_id}/candles: a market's price candles. Checks run
// 400 invalid_id (common), 400 invalid_request (interval, from, to), 404
// market_not_found.
var errsCandles = table("internal_error",
	on(market.ErrMarketNotFound, http.StatusNotFound, "market_not_found"),
)

// candleJSON is one candle as the API writes it.
type candleJSON struct {
	T             string  `json:"t"`
	Open          float64 `json:"open"`
	High          float64 `json:"high"`
	Low           float64 `json:"low"`
	Close         float64 `json:"close"`
	VolumeKopecks int64   `json:"volume_kopecks"`
	Trades        int64   `json:"trades"`
}

// handleCandles answers a market's candles of one interval.
func (h *marketHandlers) handleCandles(c *fiber.Ctx) error {
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	q := market.CandleQuery{Interval: c.Query("interval")}
	if q.From, err = queryTime(c, "from"); err != nil {
		return err
	}
	if q.To, err = queryTime(c, "to"); err != nil {
		return err
	}
	cs, err := h.markets.Candles(c.UserContext(), id, q)
	if err != nil {
		return err
	}
	out := make([]candleJSON, 0, len(cs))
	for _, k := range cs {
		out = append(out, candleJSON{T: ts(k.Start), Open: k.Open, High: k.High, Low: k.Low, Close: k.Close,
			VolumeKopecks: k.Volume, Trades: k.Trades})
	}
	return c.JSON(fiber.Map{"candles": out})
}

// queryTime reads query parameter name as an RFC 3339 time; nil when
// absent. A malformed value is a *requestError.
func queryTime(c *fiber.Ctx, name string) (*time.Time, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		// An unescaped + in a query string reads as a space.
		return nil, badRequest(name, "must be an RFC 3339 time such as 2024-03-10T00:00:00Z (escape + as %2B)")
	}
	return &t, nil
}
