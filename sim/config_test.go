package sim_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/sim"
)

func TestMaxMarginIsThePlatforms(t *testing.T) {
	if sim.MaxMargin != market.MaxMargin {
		t.Fatalf("sim.MaxMargin %v, market.MaxMargin %v", sim.MaxMargin, market.MaxMargin)
	}
}

func TestBadConfigsAreRefused(t *testing.T) {
	cases := []struct {
		name   string
		change func(*sim.Config)
		want   string
	}{
		{"an unknown design", func(c *sim.Config) { c.Design = "cpmm" }, `design "cpmm"`},
		{"one outcome", func(c *sim.Config) { c.Outcomes = 1 }, "1 outcomes, want at least 2"},
		{"b of zero", func(c *sim.Config) { c.B = 0 }, "b = 0"},
		{"a negative b", func(c *sim.Config) { c.B = -5 }, "b = -5"},
		{"a negative margin", func(c *sim.Config) { c.Margin = -0.01 }, "margin -0.01"},
		{"a margin above the platform's", func(c *sim.Config) { c.Margin = 0.25 }, "margin 0.25, want 0 to 0.2"},
		{"a NaN margin", func(c *sim.Config) { c.Margin = math.NaN() }, "margin NaN"},
		{"an LS design without commission", func(c *sim.Config) { c.Design, c.LSCommission = sim.LS, 0 }, "LS commission 0"},
		{"no traders", func(c *sim.Config) { c.Traders = 0 }, "0 traders"},
		{"no cash", func(c *sim.Config) { c.Cash = 0 }, "cash 0"},
		{"no budget", func(c *sim.Config) { c.Budget = 0 }, "budget 0"},
		{"no steps", func(c *sim.Config) { c.Steps = 0 }, "0 steps"},
		{"a negative signal noise", func(c *sim.Config) { c.Noise = -1 }, "signal noise -1"},
		{"a lookback of zero", func(c *sim.Config) { c.Lookback = 0 }, "lookback 0"},
		{"an epsilon of 1", func(c *sim.Config) { c.Epsilon = 1 }, "epsilon 1"},
		{"a mix summing to 0.9", func(c *sim.Config) { c.Mix = sim.Mix{Informed: 0.5, Noise: 0.4} }, "mix shares sum to 0.9"},
		{"a mix with a negative share", func(c *sim.Config) { c.Mix = sim.Mix{Informed: 1.2, Noise: -0.2} }, "noise share -0.2"},
		{"a truth of the wrong length", func(c *sim.Config) { c.Truth = []float64{0.5, 0.5} }, "truth has 2 probabilities for 5 outcomes"},
		{"a truth with a zero", func(c *sim.Config) { c.Truth = []float64{0, 0.25, 0.25, 0.25, 0.25} }, "truth[0] = 0"},
		{"a truth not summing to 1", func(c *sim.Config) { c.Truth = []float64{0.3, 0.3, 0.3, 0.3, 0.3} }, "truth sums to"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			c := sim.DefaultConfig()
			tc.change(&c)
			_, err := sim.Run(c)
			if !errors.Is(err, sim.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
	t.Run("the default config is accepted", func(t *testing.T) {
		if err := sim.DefaultConfig().Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWithInformedKeepsTheOthersProportions(t *testing.T) {
	cases := []struct {
		name string
		mix  sim.Mix
		s    float64
		want sim.Mix
	}{
		{"noise and momentum scale together", sim.Mix{Informed: 0.5, Noise: 0.3, Momentum: 0.2}, 0.8, sim.Mix{Informed: 0.8, Noise: 0.12, Momentum: 0.08}},
		{"an all-informed mix fills up with noise", sim.Mix{Informed: 1}, 0.25, sim.Mix{Informed: 0.25, Noise: 0.75}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.mix.WithInformed(tc.s)
			for _, d := range []float64{got.Informed - tc.want.Informed, got.Noise - tc.want.Noise, got.Momentum - tc.want.Momentum, got.Arbitrage - tc.want.Arbitrage} {
				if math.Abs(d) > 1e-12 {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}
