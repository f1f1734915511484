package bench

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// tradeData is what the bench reads of a trade message's data.
type tradeData struct {
	trade, market int64
	createdAt     []byte // RFC 3339, as sent; a slice of the data
}

// parseTradeData reads trade_id, market_id and created_at from a trade
// message's JSON object. A thousand subscribers each read every trade,
// so it looks the three keys up in the bytes (the object is flat and its
// keys unique) instead of decoding the whole object, and falls back to
// encoding/json when that fails, so an odd but valid object still reads.
func parseTradeData(data []byte) (tradeData, bool) {
	var d tradeData
	t, ok1 := jsonInt(data, `"trade_id"`)
	m, ok2 := jsonInt(data, `"market_id"`)
	c, ok3 := jsonString(data, `"created_at"`)
	if ok1 && ok2 && ok3 {
		return tradeData{trade: t, market: m, createdAt: c}, true
	}
	var v struct {
		Trade     *int64 `json:"trade_id"`
		Market    *int64 `json:"market_id"`
		CreatedAt string `json:"created_at"`
	}
	if err := json.Unmarshal(data, &v); err != nil || v.Trade == nil || v.Market == nil {
		return d, false
	}
	return tradeData{trade: *v.Trade, market: *v.Market, createdAt: []byte(v.CreatedAt)}, true
}

// jsonValue returns the bytes after `key:` in data, spaces skipped. A
// key of a nested object would match too: callers only read flat objects.
func jsonValue(data []byte, key string) ([]byte, bool) {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return nil, false
	}
	rest := bytes.TrimLeft(data[i+len(key):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	return bytes.TrimLeft(rest[1:], " \t\r\n"), true
}

func jsonInt(data []byte, key string) (int64, bool) {
	v, ok := jsonValue(data, key)
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(v) && (v[end] == '-' || v[end] >= '0' && v[end] <= '9') {
		end++
	}
	n, err := strconv.ParseInt(string(v[:end]), 10, 64)
	return n, err == nil
}

// jsonString returns a string value without escapes (dates have none);
// one with a backslash is left to encoding/json.
func jsonString(data []byte, key string) ([]byte, bool) {
	v, ok := jsonValue(data, key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(v[1:], '"')
	if end < 0 || bytes.IndexByte(v[1:1+end], '\\') >= 0 {
		return nil, false
	}
	return v[1 : 1+end], true
}
