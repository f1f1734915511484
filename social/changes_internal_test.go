package social

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestNotificationEntryIsEncodingJSONs: a notification entry's
// hand-written JSON is encoding/json's, byte for byte, whichever of the
// data's fields are empty.
func TestNotificationEntryIsEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "YES", "buy", `quo"te`, `back\slash`, "<b>&", "tab\t", "кириллица «ёлка»", "\u2028", string([]byte{0xff}), "Will it rain?"}
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 22911}
	pickStr := func() string {
		if r.IntN(3) == 0 {
			return ""
		}
		return strs[r.IntN(len(strs))]
	}
	pickInt := func() int64 {
		if r.IntN(3) == 0 {
			return ints[r.IntN(len(ints))]
		}
		return r.Int64N(1 << 40)
	}
	for range 20000 {
		d := notificationData{ID: pickInt(), UserID: pickInt(), Type: pickStr(), Title: pickStr(), Message: pickStr(),
			Read: r.IntN(2) == 0, CreatedAt: time.Unix(r.Int64N(1<<33), r.Int64N(1e9)).UTC().Format(time.RFC3339Nano),
			RelatedID: pickInt(), RelatedType: pickStr(),
			Data: NotificationData{EventName: pickStr(), MarketName: pickStr(), Side: pickStr(), Action: pickStr(), Shares: pickInt(),
				Amount: pickInt(), Won: pickStr(), Author: pickStr(), Excerpt: pickStr(), Other: pickStr(),
				EventNameRu: pickStr(), ExcerptRu: pickStr(), Proposed: pickStr(), Until: pickStr(),
				MarketNameRu: pickStr(), OtherRu: pickStr(), EventID: pickInt(), Level: int(pickInt())}}
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.json(); !bytes.Equal(got, want) {
			t.Fatalf("appended %s\nencoding/json %s", got, want)
		}
		want, err = json.Marshal(d.Data)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Data.AppendJSON([]byte("prefix")); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("data appended %s\nencoding/json %s", got, want)
		}
	}
}

// BenchmarkNotificationData compares the data a trade's notification
// stores, appended by hand and by encoding/json.
func BenchmarkNotificationData(b *testing.B) {
	d := NotificationData{EventName: "Weather", MarketName: "Will it rain in Moscow tomorrow?", Side: "YES", Action: "buy", Shares: 912345, Amount: 100_000}
	b.Run("appended", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = d.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
