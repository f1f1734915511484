package server

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/internal/jsonenc"
)

// The views read most often (a pool, an event, a market) write their JSON
// by appending to a byte slice: encoding/json's reflection was a fifth of
// the CPU time of a pool read. The output is byte for byte what
// encoding/json writes (TestAppendedJSONIsEncodingJSONs checks it on
// random values): the same escapes, HTML-safe, and the same float format.

// jsonAppender is a view that can append its JSON to b; ok is false when
// it cannot (a float that JSON has no number for), and then the caller
// lets encoding/json report the error.
type jsonAppender interface {
	appendJSON(b []byte) (_ []byte, ok bool)
}

// sendJSON answers v as Ctx.JSON does.
func sendJSON(c *fiber.Ctx, v jsonAppender) error {
	b, ok := v.appendJSON(make([]byte, 0, 2048))
	if !ok {
		return c.JSON(v)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(b)
}

// appendJSONString appends s quoted as encoding/json does.
var appendJSONString = jsonenc.AppendString

// appendJSONFloat appends f as encoding/json writes a float64; ok is
// false for NaN and the infinities.
var appendJSONFloat = jsonenc.AppendFloat

// appendKey appends ,"name": (or {"name": for the first field, when b
// ends with '{').
func appendKey(b []byte, name string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendJSONArray appends items as a JSON array, null when nil, each item
// by appendItem.
func appendJSONArray[T any](b []byte, items []T, appendItem func([]byte, *T) ([]byte, bool)) ([]byte, bool) {
	if items == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendItem(b, &items[i]); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

func appendMarket(b []byte, v *marketJSON) ([]byte, bool) { return v.appendJSON(b) }
func appendPool(b []byte, v *poolJSON) ([]byte, bool)     { return v.appendJSON(b) }
func appendEvent(b []byte, v *eventJSON) ([]byte, bool)   { return v.appendJSON(b) }
func appendString(b []byte, s *string) ([]byte, bool)     { return appendJSONString(b, *s), true }
func appendFloat(b []byte, f *float64) ([]byte, bool)     { return appendJSONFloat(b, *f) }

func (v *marketJSON) appendJSON(b []byte) ([]byte, bool) {
	var ok bool
	b = append(b, '{')
	b = strconv.AppendInt(appendKey(b, "id"), v.ID, 10)
	b = strconv.AppendInt(appendKey(b, "pool_id"), v.PoolID, 10)
	b = strconv.AppendInt(appendKey(b, "event_id"), v.EventID, 10)
	b = appendJSONString(appendKey(b, "name"), v.Name)
	b = appendJSONString(appendKey(b, "name_ru"), v.NameRu)
	if b, ok = appendJSONFloat(appendKey(b, "yes_probability"), v.YesProbability); !ok {
		return b, false
	}
	b = appendJSONString(appendKey(b, "market_type"), v.MarketType)
	b = strconv.AppendInt(appendKey(b, "volume"), v.Volume, 10)
	b = strconv.AppendInt(appendKey(b, "b"), v.B, 10)
	b = strconv.AppendInt(appendKey(b, "q_yes"), v.QYes, 10)
	b = strconv.AppendInt(appendKey(b, "q_no"), v.QNo, 10)
	b = strconv.AppendBool(appendKey(b, "paused"), v.Paused)
	b = strconv.AppendBool(appendKey(b, "trading_open"), v.TradingOpen)
	b = strconv.AppendBool(appendKey(b, "resolved"), v.Resolved)
	b = strconv.AppendBool(appendKey(b, "settling"), v.Settling)
	b = appendJSONNullString(appendKey(b, "winning_outcome"), v.WinningOutcome)
	b = strconv.AppendInt(appendKey(b, "outcome_index"), int64(v.OutcomeIndex), 10)
	b = appendJSONString(appendKey(b, "yes_name"), v.YesName)
	b = appendJSONString(appendKey(b, "no_name"), v.NoName)
	b = appendJSONNullString(appendKey(b, "resolved_at"), v.ResolvedAt)
	b = appendJSONNullString(appendKey(b, "resolved_by"), v.ResolvedBy)
	b = strconv.AppendBool(appendKey(b, "other"), v.Other)
	if r := v.Resolution; r != nil {
		b = append(appendKey(b, "resolution"), '{')
		b = appendJSONString(appendKey(b, "proposed"), r.Proposed)
		b = strconv.AppendInt(appendKey(b, "by"), r.By, 10)
		b = appendJSONString(appendKey(b, "challenge_until"), r.ChallengeUntil)
		b = strconv.AppendBool(appendKey(b, "disputed"), r.Disputed)
		b = append(b, '}')
	}
	if len(v.Sparkline) > 0 {
		if b, ok = appendJSONArray(appendKey(b, "sparkline"), v.Sparkline, appendFloat); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendJSONNullString appends *s as a JSON string, null when s is nil.
func appendJSONNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

func (v *poolJSON) appendJSON(b []byte) ([]byte, bool) {
	var ok bool
	b = append(b, '{')
	b = strconv.AppendInt(appendKey(b, "id"), v.ID, 10)
	b = strconv.AppendInt(appendKey(b, "event_id"), v.EventID, 10)
	b = appendJSONString(appendKey(b, "name"), v.Name)
	b = appendJSONString(appendKey(b, "name_ru"), v.NameRu)
	b = appendJSONString(appendKey(b, "rules"), v.Rules)
	b = appendJSONString(appendKey(b, "rules_ru"), v.RulesRu)
	b = appendKey(b, "won_side")
	if v.WonSide == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*v.WonSide), 10)
	}
	if b, ok = appendJSONFloat(appendKey(b, "margin"), v.Margin); !ok {
		return b, false
	}
	b = appendJSONString(appendKey(b, "finish_at"), v.FinishAt)
	b = appendJSONString(appendKey(b, "live_at"), v.LiveAt)
	b = strconv.AppendBool(appendKey(b, "exclusive"), v.Exclusive)
	if b, ok = appendJSONArray(appendKey(b, "markets"), v.Markets, appendMarket); !ok {
		return b, false
	}
	m := &v.Metadata
	b = append(appendKey(b, "metadata"), '{')
	b, _ = appendJSONArray(appendKey(b, "market_names"), m.MarketNames, appendString)
	if b, ok = appendJSONArray(appendKey(b, "market_probabilities"), m.MarketProbabilities, appendFloat); !ok {
		return b, false
	}
	b = strconv.AppendInt(appendKey(b, "lmsr_b_kopecks"), m.LMSRBKopecks, 10)
	return append(b, '}', '}'), true
}

func (v *eventJSON) appendJSON(b []byte) ([]byte, bool) {
	var ok bool
	b = append(b, '{')
	b = strconv.AppendInt(appendKey(b, "id"), v.ID, 10)
	b = appendJSONString(appendKey(b, "name"), v.Name)
	b = appendJSONString(appendKey(b, "name_ru"), v.NameRu)
	b = strconv.AppendInt(appendKey(b, "creator_id"), v.CreatorID, 10)
	b = strconv.AppendBool(appendKey(b, "is_active"), v.IsActive)
	b = appendJSONString(appendKey(b, "created_at"), v.CreatedAt)
	b, _ = appendJSONArray(appendKey(b, "tags"), v.Tags, appendString)
	if b, ok = appendJSONArray(appendKey(b, "pools"), v.Pools, appendPool); !ok {
		return b, false
	}
	b, _ = appendJSONArray(appendKey(b, "amendments"), v.Amendments, appendAmendment)
	b = appendJSONString(appendKey(b, "status"), v.Status)
	if p := v.Proposal; p != nil {
		b = append(appendKey(b, "proposal"), '{')
		b = strconv.AppendInt(appendKey(b, "ante_kopecks"), p.AnteKopecks, 10)
		if b = appendKey(b, "decided_at"); p.DecidedAt != nil {
			b = appendJSONString(b, *p.DecidedAt)
		} else {
			b = append(b, "null"...)
		}
		b = appendJSONString(appendKey(b, "reason"), p.Reason)
		b = append(strconv.AppendBool(appendKey(b, "refunded"), p.Refunded), '}')
	}
	if v.VolumeKopecks != nil {
		b = strconv.AppendInt(appendKey(b, "volume_kopecks"), *v.VolumeKopecks, 10)
	}
	if v.Volume24hKopecks != nil {
		b = strconv.AppendInt(appendKey(b, "volume_24h_kopecks"), *v.Volume24hKopecks, 10)
	}
	if v.ClosesAt != nil {
		b = appendJSONString(appendKey(b, "closes_at"), *v.ClosesAt)
	}
	return append(b, '}'), true
}

func appendAmendment(b []byte, v *amendmentJSON) ([]byte, bool) {
	b = append(b, '{')
	b = strconv.AppendInt(appendKey(b, "id"), v.ID, 10)
	b = strconv.AppendInt(appendKey(b, "event_id"), v.EventID, 10)
	b = appendJSONString(appendKey(b, "text"), v.Text)
	b = appendJSONString(appendKey(b, "text_ru"), v.TextRu)
	b = appendJSONString(appendKey(b, "created_at"), v.CreatedAt)
	return append(b, '}'), true
}

// eventsJSON is the body of GET /api/v1/events: a page of the feed and
// the cursor of the next (null on the last page).
type eventsJSON struct {
	Events     []eventJSON `json:"events"`
	NextCursor *string     `json:"next_cursor"`
}

func (v *eventsJSON) appendJSON(b []byte) ([]byte, bool) {
	b, ok := appendJSONArray(append(b, `{"events":`...), v.Events, appendEvent)
	if !ok {
		return b, false
	}
	b = appendJSONNullString(appendKey(b, "next_cursor"), v.NextCursor)
	return append(b, '}'), true
}
