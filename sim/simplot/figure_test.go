package simplot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

var update = flag.Bool("update", false, "rewrite the golden text of the figures in testdata/")

// pricePaths simulates n runs of a price drifting from 0.2 towards truth,
// deterministically, in place of a market simulation.
func pricePaths(name string, truth float64, runs, steps int, seed uint64) Paths {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := Paths{Name: name, Truth: make([]float64, steps)}
	for range runs {
		run := make([]float64, steps)
		x := 0.2
		for s := range run {
			x += 0.03*(truth-x) + 0.01*rng.NormFloat64()
			run[s] = math.Min(math.Max(x, 0.001), 0.999)
		}
		p.Runs = append(p.Runs, run)
	}
	for s := range p.Truth {
		p.Truth[s] = truth
	}
	return p
}

func forecasts(n int) ([]float64, []bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	f, h := make([]float64, n), make([]bool, n)
	for i := range f {
		f[i] = rng.Float64()
		h[i] = rng.Float64() < 0.1+0.8*f[i]
	}
	return f, h
}

func sweepPanels() []Panel {
	var panels []Panel
	for _, title := range []string{"no fee", "2% fee"} {
		p := Panel{Title: title}
		for k, name := range []string{"binary LMSR", "exclusive pool"} {
			s := Series{Name: name}
			for _, b := range []float64{500, 100, 1000, 5000, 10000} {
				m := 0.1 + 0.05*float64(k) + 0.01*math.Log(b)
				s.X, s.Mean = append(s.X, b), append(s.Mean, m)
				s.Lo, s.Hi = append(s.Lo, m-0.01), append(s.Hi, m+0.02)
			}
			p.Series = append(p.Series, s)
		}
		panels = append(panels, p)
	}
	return panels
}

func pnl() []float64 {
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float64, 500)
	for i := range v {
		v[i] = math.Round(-300 + 800*rng.NormFloat64())
	}
	return v
}

var figures = []struct {
	name  string
	build func() (*Figure, error)
	// want are texts a reader looks for: titles, labels, legend entries.
	want []string
}{
	{
		name: "bands",
		build: func() (*Figure, error) {
			return QuantileBands([]Paths{
				pricePaths("outcome A", 0.5, 100, 120, 1),
				pricePaths("outcome B", 0.3, 100, 120, 2),
				pricePaths("outcome C", 0.2, 100, 120, 3),
			}, Options{
				Title: "Prices over 100 runs", XLabel: "trades", YLabel: "price (probability)",
				YMin: Float(0), YMax: Float(1), Percent: true,
			})
		},
		want: []string{"Prices over 100 runs", "outcome A", "outcome C", "trades", "price (probability)", "median", "25–75% of runs", "10–90% of runs", "truth", "100%"},
	},
	{
		name: "calibration",
		build: func() (*Figure, error) {
			f, h := forecasts(2000)
			return Calibration(f, h, 10, Options{Title: "Calibration of final prices", Percent: true})
		},
		want: []string{"Calibration of final prices", "forecast probability", "observed frequency", "perfect calibration", "60%"},
	},
	{
		name: "sweep",
		build: func() (*Figure, error) {
			return Sweep(sweepPanels(), Options{Title: "Brier score against b", XLabel: "liquidity b (kopecks)", YLabel: "Brier score"}, true)
		},
		want: []string{"Brier score against b", "no fee", "2% fee", "binary LMSR", "exclusive pool", "liquidity b (kopecks)", "1,000", "10,000"},
	},
	{
		name: "histogram",
		build: func() (*Figure, error) {
			return Histogram(pnl(), 30, []Ref{{"worst case −b·ln 2", -3466}, {"mean", -300}},
				Options{Title: "Market maker's P&L", XLabel: "P&L (kopecks)"})
		},
		want: []string{"Market maker's P&L", "P&L (kopecks)", "runs", "500 values in 30 bins", "worst case −b·ln 2 = −3,466", "mean = −300", "−2,000"},
	},
}

func TestFiguresRenderToPNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	for _, fig := range figures {
		t.Run("the "+fig.name+" figure is a readable PNG and SVG", func(t *testing.T) {
			f, err := fig.build()
			if err != nil {
				t.Fatal(err)
			}
			pngPath := filepath.Join(dir, fig.name+".png")
			if err := f.Save(pngPath); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, pngPath, f)

			svgPath := filepath.Join(dir, fig.name+".svg")
			if err := f.Save(svgPath); err != nil {
				t.Fatal(err)
			}
			texts := svgTexts(t, svgPath)
			joined := strings.Join(texts, "\n")
			for _, w := range fig.want {
				if !strings.Contains(joined, w) {
					t.Errorf("SVG has no text %q; it has:\n%s", w, joined)
				}
			}
			golden(t, fig.name, texts)
		})
	}
}

// checkPNG decodes the PNG, checks its size against the figure's at 150
// dots per inch, and checks that the data were drawn in the palette's
// first colour, which every figure uses for its main data.
func checkPNG(t *testing.T, path string, f *Figure) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	img, err := png.Decode(file)
	if err != nil {
		t.Fatalf("%s does not decode as PNG: %v", path, err)
	}
	w, h := f.Size()
	wantW, wantH := int(w/vg.Inch*150+0.5), int(h/vg.Inch*150+0.5)
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("PNG is %d×%d pixels, want %d×%d", b.Dx(), b.Dy(), wantW, wantH)
	}
	near := func(c color.Color, ref color.Color, tol int) bool {
		r, g, b, _ := c.RGBA()
		rr, rg, rb, _ := ref.RGBA()
		d := func(a, b uint32) int { return max(int(a>>8)-int(b>>8), int(b>>8)-int(a>>8)) }
		return d(r, rr) <= tol && d(g, rg) <= tol && d(b, rb) <= tol
	}
	var blue, white int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			switch {
			case near(c, Palette[0], 30) || near(c, Palette[5], 30):
				blue++
			case near(c, color.White, 0):
				white++
			}
		}
	}
	total := b.Dx() * b.Dy()
	if blue < total/500 {
		t.Errorf("only %d of %d pixels are in the data's colour: the data were not drawn", blue, total)
	}
	if white < total/3 {
		t.Errorf("only %d of %d pixels are white background: the figure is cluttered or not drawn", white, total)
	}
}

// svgTexts parses the SVG as XML and returns the text of its <text>
// elements in order.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	inText, sawSVG := false, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			sawSVG = sawSVG || tok.Name.Local == "svg"
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		}
	}
	if !sawSVG {
		t.Fatalf("%s has no <svg> element", path)
	}
	return texts
}

// golden compares the figure's texts, in drawing order, with
// testdata/NAME.golden. Text is robust where pixels are not: it changes
// only when a label, tick, title or legend entry does.
func golden(t *testing.T, name string, texts []string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	got := strings.Join(texts, "\n") + "\n"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("texts of %s differ from %s (run with -update if the change is meant):\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func TestSaveRefusesUnknownExtensions(t *testing.T) {
	f, err := figures[1].build()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "calibration.pdf")
	err = f.Save(path)
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), ".png") || !strings.Contains(err.Error(), ".svg") {
		t.Errorf("Save(%q) error = %v, want one naming .png and .svg", path, err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Errorf("Save(%q) left a file behind", path)
	}
	if err := f.Encode(io.Discard, "jpeg"); !errors.Is(err, ErrInput) {
		t.Errorf(`Encode(_, "jpeg") error = %v, want ErrInput`, err)
	}
}

func TestFigureSizeGrowsWithThePanels(t *testing.T) {
	panels := func(n int) []Paths {
		var ps []Paths
		for i := range n {
			ps = append(ps, pricePaths("p", 0.5, 3, 5, uint64(i)))
		}
		return ps
	}
	tests := []struct {
		name     string
		n        int
		o        Options
		wantCols int
	}{
		{"one panel fills one row", 1, Options{}, 1},
		{"three panels sit side by side", 3, Options{}, 3},
		{"four panels make a square", 4, Options{}, 2},
		{"five outcomes wrap after three", 5, Options{}, 3},
		{"the columns can be fixed", 5, Options{Columns: 1}, 1},
		{"more columns than panels are not left empty", 2, Options{Columns: 4}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := QuantileBands(panels(tt.n), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if f.cols != tt.wantCols {
				t.Errorf("%d panels in %d columns, want %d", tt.n, f.cols, tt.wantCols)
			}
			rows := (tt.n + tt.wantCols - 1) / tt.wantCols
			if w, h := f.Size(); h < vg.Length(rows)*panelHeight || w < vg.Length(tt.wantCols)*panelWidth {
				t.Errorf("%d×%d panels get %v × %v, too small", rows, tt.wantCols, w, h)
			}
		})
	}
	f, err := QuantileBands(panels(2), Options{Width: 4 * vg.Inch, Height: 3 * vg.Inch})
	if err != nil {
		t.Fatal(err)
	}
	if w, h := f.Size(); w != 4*vg.Inch || h != 3*vg.Inch {
		t.Errorf("a figure asked for 4in × 3in is %v × %v", w, h)
	}
}

func TestSweepKeepsOneColourAndLegendEntryPerSeries(t *testing.T) {
	f, err := Sweep(sweepPanels(), Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range f.legend {
		names = append(names, e.name)
	}
	if got := strings.Join(names, ", "); got != "binary LMSR, exclusive pool" {
		t.Errorf("legend = %q, want each series once", got)
	}
}

func TestPNGResolutionFollowsDPI(t *testing.T) {
	tests := []struct {
		name         string
		dpi          int
		wantW, wantH int
	}{
		{"the default is 150 dots per inch", 0, 600, 450},
		{"a screen at 96 dots per inch", 96, 384, 288},
		{"print at 300 dots per inch", 300, 1200, 900},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Histogram([]float64{1, 2, 2, 3}, 3, nil, Options{Width: 4 * vg.Inch, Height: 3 * vg.Inch, DPI: tt.dpi})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := f.Encode(&buf, "png"); err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Width != tt.wantW || cfg.Height != tt.wantH {
				t.Errorf("PNG is %d×%d, want %d×%d", cfg.Width, cfg.Height, tt.wantW, tt.wantH)
			}
		})
	}
}
