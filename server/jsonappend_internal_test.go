package server

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// randString returns strings that exercise every escape: controls,
// quotes, HTML characters, multi-byte runes, U+2028/2029 and bytes that
// are not UTF-8.
func randString(r *rand.Rand) string {
	pieces := []string{"", "a", "Northside FC", "Кто возьмёт кубок?", `"`, `\`, "<", ">", "&", "\n", "\r", "\t", "\b", "\f",
		"\x00", "\x1f", "\x7f", "\u2028", "\u2029", "\xff", "\xe2\x80", "😀", "é", " ", "'", "/"}
	n := r.IntN(6)
	var b []byte
	for range n {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

func randFloat(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return r.Float64()
	case 2:
		return -r.Float64() * 1e-7
	case 3:
		return r.Float64() * 1e22
	case 4:
		return math.Float64frombits(r.Uint64()) // any finite value, often huge or tiny
	case 5:
		return 1e21
	case 6:
		return 1e-6
	default:
		return float64(r.IntN(1000)) / 1000
	}
}

func randMarket(r *rand.Rand) marketJSON {
	m := marketJSON{ID: r.Int64(), PoolID: r.Int64N(100), EventID: -r.Int64N(5), Name: randString(r), NameRu: randString(r),
		YesProbability: randFloat(r), MarketType: randString(r), Volume: r.Int64(), B: r.Int64(), QYes: r.Int64(), QNo: r.Int64(),
		Paused: r.IntN(2) == 0, TradingOpen: r.IntN(2) == 0, Resolved: r.IntN(2) == 0, OutcomeIndex: r.IntN(10) - 2, YesName: randString(r), NoName: randString(r)}
	if r.IntN(2) == 0 {
		s := randString(r)
		m.WinningOutcome = &s
	}
	if r.IntN(2) == 0 {
		at, by := randString(r), randString(r)
		m.ResolvedAt, m.ResolvedBy = &at, &by
	}
	if r.IntN(2) == 0 {
		m.Resolution = &resolutionJSON{Proposed: randString(r), By: r.Int64(), ChallengeUntil: randString(r), Disputed: r.IntN(2) == 0}
	}
	return m
}

func randPool(r *rand.Rand) poolJSON {
	p := poolJSON{ID: r.Int64(), EventID: r.Int64(), Name: randString(r), NameRu: randString(r), Rules: randString(r), RulesRu: randString(r),
		Margin: randFloat(r), FinishAt: randString(r), LiveAt: randString(r), Metadata: poolMetadata{LMSRBKopecks: r.Int64()}}
	if r.IntN(2) == 0 {
		w := r.IntN(3) - 1
		p.WonSide = &w
	}
	if r.IntN(5) > 0 {
		p.Markets = []marketJSON{}
		p.Metadata.MarketNames = []string{}
		p.Metadata.MarketProbabilities = []float64{}
		for range r.IntN(4) {
			m := randMarket(r)
			p.Markets = append(p.Markets, m)
			p.Metadata.MarketNames = append(p.Metadata.MarketNames, m.Name)
			p.Metadata.MarketProbabilities = append(p.Metadata.MarketProbabilities, m.YesProbability)
		}
	}
	return p
}

func randEvents(r *rand.Rand) eventsJSON {
	var v eventsJSON
	if r.IntN(5) == 0 {
		return v
	}
	v.Events = []eventJSON{}
	for range r.IntN(3) {
		e := eventJSON{ID: r.Int64(), Name: randString(r), NameRu: randString(r), CreatorID: r.Int64(), IsActive: r.IntN(2) == 0, CreatedAt: randString(r)}
		if r.IntN(5) > 0 {
			e.Tags = []string{}
			for range r.IntN(3) {
				e.Tags = append(e.Tags, randString(r))
			}
		}
		if r.IntN(5) > 0 {
			e.Pools = []poolJSON{}
			for range r.IntN(3) {
				e.Pools = append(e.Pools, randPool(r))
			}
		}
		if r.IntN(5) > 0 {
			e.Amendments = []amendmentJSON{}
			for range r.IntN(3) {
				e.Amendments = append(e.Amendments, amendmentJSON{ID: r.Int64(), EventID: r.Int64(), Text: randString(r), TextRu: randString(r), CreatedAt: randString(r)})
			}
		}
		v.Events = append(v.Events, e)
	}
	return v
}

func TestAppendedJSONIsEncodingJSONs(t *testing.T) {
	check := func(t *testing.T, v jsonAppender) {
		t.Helper()
		want, err := json.Marshal(v)
		got, ok := v.appendJSON(nil)
		if err != nil {
			if ok {
				t.Fatalf("encoding/json refused %#v (%v), appendJSON wrote %s", v, err, got)
			}
			return
		}
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("appendJSON wrote\n%s (ok %v)\nencoding/json\n%s", got, ok, want)
		}
	}
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 7))
		m, p, es := randMarket(r), randPool(r), randEvents(r)
		check(t, &m)
		check(t, &p)
		check(t, &es)
	}
	t.Run("a probability JSON has no number for is left to encoding/json", func(t *testing.T) {
		for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			m := marketJSON{YesProbability: f}
			if _, ok := m.appendJSON(nil); ok {
				t.Fatalf("appendJSON wrote %v", f)
			}
			p := poolJSON{Metadata: poolMetadata{MarketProbabilities: []float64{f}}}
			if _, ok := p.appendJSON(nil); ok {
				t.Fatalf("appendJSON wrote %v in the metadata", f)
			}
		}
	})
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<script>&", "\u2028\u2029", "\xff\xfe", "Кубок\n\t\"q\"", "\x00\x1f\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

func FuzzAppendJSONFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 0.5, 1e-6, 9.99e-7, 1e21, 1e20, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		want, err := json.Marshal(x)
		got, ok := appendJSONFloat(nil, x)
		if (err == nil) != ok || ok && !bytes.Equal(got, want) {
			t.Fatalf("appendJSONFloat(%v) = %s, %v; encoding/json %s, %v", x, got, ok, want, err)
		}
	})
}

func BenchmarkPoolJSON(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	p := randPool(r)
	for len(p.Markets) < 3 {
		p = randPool(r)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := p.appendJSON(make([]byte, 0, 2048)); !ok {
				b.Fatal("not appended")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
