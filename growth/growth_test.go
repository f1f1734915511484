package growth_test

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/growth"
)

func TestLevel(t *testing.T) {
	r := growth.DefaultRules()
	for _, c := range []struct {
		volume int64
		want   int
	}{{0, 1}, {99_999, 1}, {100_000, 2}, {999_999, 2}, {1_000_000, 3}, {10_000_000, 4}, {99_999_999, 4}, {100_000_000, 5}, {1 << 62, 5}} {
		if got := r.Level(c.volume); got != c.want {
			t.Errorf("Level(%d) = %d, want %d", c.volume, got, c.want)
		}
	}
}

func TestQualified(t *testing.T) {
	r := growth.DefaultRules()
	for _, c := range []struct {
		volume int64
		want   bool
	}{{0, false}, {99_999, false}, {100_000, true}, {200_000, true}} {
		if got := r.Qualified(c.volume); got != c.want {
			t.Errorf("Qualified(%d) = %v, want %v", c.volume, got, c.want)
		}
	}
}

func TestParseLevels(t *testing.T) {
	t.Run("ascending thresholds from zero parse", func(t *testing.T) {
		got, err := growth.ParseLevels("0, 100000,1000000")
		if err != nil || len(got) != 3 || got[2] != 1_000_000 {
			t.Fatalf("ParseLevels = %v, %v", got, err)
		}
	})
	for name, s := range map[string]string{
		"a list not starting at zero is refused": "100,200",
		"a list going down is refused":           "0,200,100",
		"a repeated threshold is refused":        "0,100,100",
		"a word is refused":                      "0,lots",
		"a negative threshold is refused":        "0,-5",
		"an empty item is refused":               "0,,100",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := growth.ParseLevels(s); !errors.Is(err, growth.ErrLevels) {
				t.Fatalf("ParseLevels(%q) = %v, want ErrLevels", s, err)
			}
		})
	}
}
