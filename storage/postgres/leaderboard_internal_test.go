package postgres

import "testing"

func TestTradeIDOf(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       int64
	}{
		{"the id written first is read without decoding", `{"trade_id":28627,"market_id":1,"side":"NO"}`, 28627},
		{"an id alone in the object is read", `{"trade_id":7}`, 7},
		{"an id written elsewhere is decoded", `{"market_id":1,"trade_id":42}`, 42},
		{"an id too long for the fast path is decoded", `{"trade_id":1234567890123456789,"x":1}`, 1234567890123456789},
		{"an id followed by something odd is decoded", `{"trade_id":12 ,"x":1}`, 12},
		{"an entry without an id names no trade", `{"market_id":1}`, 0},
		{"a string id names no trade", `{"trade_id":"12"}`, 0},
		{"broken JSON names no trade", `{"trade_id":`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tradeIDOf([]byte(tc.data)); got != tc.want {
				t.Fatalf("tradeIDOf(%s) = %d, want %d", tc.data, got, tc.want)
			}
		})
	}
}
