package jsonenc_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/predictkit/predictkit/internal/jsonenc"
)

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1e-300, 5e-324, 1e20, 1e21, 1.5e300, 123456.789, math.MaxFloat64, -math.SmallestNonzeroFloat64} {
		t.Run("writes "+string(mustJSON(t, f))+" as encoding/json does", func(t *testing.T) {
			got, ok := jsonenc.AppendFloat(nil, f)
			if want := mustJSON(t, f); !ok || string(got) != string(want) {
				t.Fatalf("AppendFloat(%v) = %s, %v; want %s", f, got, ok, want)
			}
		})
	}
	t.Run("refuses what JSON has no number for", func(t *testing.T) {
		for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			if _, ok := jsonenc.AppendFloat(nil, f); ok {
				t.Errorf("AppendFloat(%v) ok", f)
			}
		}
	})
}

func mustJSON(t *testing.T, f float64) []byte {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
