package simplot

import (
	"errors"
	"testing"
)

func TestFiguresRefuseBadInput(t *testing.T) {
	good := pricePaths("A", 0.5, 3, 4, 1)
	series := func(mod func(*Series)) []Panel {
		s := Series{Name: "s", X: []float64{1, 2}, Mean: []float64{0.1, 0.2}, Lo: []float64{0, 0.1}, Hi: []float64{0.2, 0.3}}
		mod(&s)
		return []Panel{{Title: "p", Series: []Series{s}}}
	}
	tests := []struct {
		name  string
		build func() (*Figure, error)
	}{
		{"bands without panels", func() (*Figure, error) { return QuantileBands(nil, Options{}) }},
		{"bands of a panel without runs", func() (*Figure, error) { return QuantileBands([]Paths{{Name: "A"}}, Options{}) }},
		{"bands of ragged runs", func() (*Figure, error) {
			return QuantileBands([]Paths{{Name: "A", Runs: [][]float64{{1, 2, 3}, {1, 2}}}}, Options{})
		}},
		{"bands with a truth of the wrong length", func() (*Figure, error) {
			p := good
			p.Truth = []float64{0.5}
			return QuantileBands([]Paths{p}, Options{})
		}},
		{"bands with a NaN truth", func() (*Figure, error) {
			p := good
			p.Truth = []float64{0.5, nan(), 0.5, 0.5}
			return QuantileBands([]Paths{p}, Options{})
		}},
		{"bands with a NaN price", func() (*Figure, error) {
			return QuantileBands([]Paths{{Name: "A", Runs: [][]float64{{0.1, nan()}}}}, Options{})
		}},
		{"bands with YMin above YMax", func() (*Figure, error) {
			return QuantileBands([]Paths{good}, Options{YMin: Float(1), YMax: Float(0)})
		}},
		{"bands with a negative width", func() (*Figure, error) { return QuantileBands([]Paths{good}, Options{Width: -1}) }},
		{"bands a quarter of an inch wide", func() (*Figure, error) {
			return QuantileBands([]Paths{good}, Options{Width: 18, Height: 200})
		}},
		{"a sweep without panels", func() (*Figure, error) { return Sweep(nil, Options{}, false) }},
		{"a sweep panel without series", func() (*Figure, error) { return Sweep([]Panel{{Title: "p"}}, Options{}, false) }},
		{"a sweep series without points", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { *s = Series{Name: "s"} }), Options{}, false)
		}},
		{"a sweep series with fewer means than x values", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { s.Mean = s.Mean[:1] }), Options{}, false)
		}},
		{"a sweep series with only a lower bound", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { s.Hi = nil }), Options{}, false)
		}},
		{"a sweep series with a short interval", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { s.Lo = s.Lo[:1] }), Options{}, false)
		}},
		{"a sweep interval upside down", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { s.Lo[1] = 0.9 }), Options{}, false)
		}},
		{"a sweep with an infinite mean", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { s.Mean[0] = inf() }), Options{}, false)
		}},
		{"a log sweep through zero", func() (*Figure, error) {
			return Sweep(series(func(s *Series) { s.X[0] = 0 }), Options{}, true)
		}},
		{"a histogram without bins", func() (*Figure, error) { return Histogram([]float64{1}, 0, nil, Options{}) }},
		{"a histogram without values", func() (*Figure, error) { return Histogram(nil, 10, nil, Options{}) }},
		{"a histogram of a NaN", func() (*Figure, error) { return Histogram([]float64{1, nan()}, 10, nil, Options{}) }},
		{"a histogram with an infinite reference", func() (*Figure, error) {
			return Histogram([]float64{1, 2}, 10, []Ref{{"bound", inf()}}, Options{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an error", func(t *testing.T) {
			f, err := tt.build()
			if !errors.Is(err, ErrInput) {
				t.Errorf("error = %v, want one wrapping ErrInput", err)
			}
			if f != nil {
				t.Errorf("got a figure along with the error")
			}
		})
	}
}

func TestEdgeCasesStillDraw(t *testing.T) {
	tests := []struct {
		name  string
		build func() (*Figure, error)
	}{
		{"a histogram of one value repeated", func() (*Figure, error) { return Histogram([]float64{7, 7, 7}, 10, nil, Options{}) }},
		{"a histogram of one bin", func() (*Figure, error) { return Histogram([]float64{1, 2, 3}, 1, nil, Options{}) }},
		{"bands of a single run", func() (*Figure, error) {
			return QuantileBands([]Paths{{Name: "A", Runs: [][]float64{{0.1, 0.2}}}}, Options{})
		}},
		{"bands of a constant price", func() (*Figure, error) {
			return QuantileBands([]Paths{{Name: "A", Runs: [][]float64{{0.5, 0.5}, {0.5, 0.5}}}}, Options{})
		}},
		{"a sweep of one point without an interval", func() (*Figure, error) {
			return Sweep([]Panel{{Title: "p", Series: []Series{{Name: "s", X: []float64{100}, Mean: []float64{0.2}}}}}, Options{}, true)
		}},
		{"a log sweep of one point below one", func() (*Figure, error) {
			return Sweep([]Panel{{Title: "p", Series: []Series{{Name: "s", X: []float64{0.5}, Mean: []float64{0.2}}}}}, Options{}, true)
		}},
		{"a calibration with every forecast in one bin", func() (*Figure, error) {
			return Calibration([]float64{0.5, 0.5, 0.5}, []bool{true, false, true}, 10, Options{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.build()
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"png", "svg"} {
				var buf countWriter
				if err := f.Encode(&buf, format); err != nil || buf == 0 {
					t.Errorf("Encode(%s) wrote %d bytes, error %v", format, buf, err)
				}
			}
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
