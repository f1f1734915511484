package account

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBalanceEntryIsEncodingJSONs: a balance entry's hand-written JSON
// is encoding/json's, byte for byte.
func TestBalanceEntryIsEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	reasons := []string{"", "trade", "deposit", "settlement", `quo"te`, "<&>", "кириллица", string([]byte{0xfe})}
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64}
	pick := func() int64 {
		if r.IntN(3) == 0 {
			return ints[r.IntN(len(ints))]
		}
		return r.Int64N(1<<50) - 1<<49
	}
	for range 20000 {
		d := balanceData{UserID: pick(), Balance: pick(), BonusBalance: pick(), TotalBalance: pick(), Reason: reasons[r.IntN(len(reasons))]}
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.json(); !bytes.Equal(got, want) {
			t.Fatalf("appended %s\nencoding/json %s", got, want)
		}
	}
}
