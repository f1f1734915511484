package simplot_test

import (
	"fmt"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/predictkit/predictkit/sim/simplot"
)

// The bins behind a reliability diagram, ready for a table or a CSV.
func ExampleCalibrationBins() {
	forecast := []float64{0.1, 0.15, 0.2, 0.6, 0.7, 0.8, 0.9, 0.95}
	happened := []bool{false, false, true, true, false, true, true, true}
	bins, err := simplot.CalibrationBins(forecast, happened, 2)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range bins {
		fmt.Printf("[%.1f, %.1f): %d forecasts, mean %.3f, happened %.2f, 95%% interval %.2f–%.2f\n",
			b.Lo, b.Hi, b.Count, b.MeanForecast, b.Observed, b.WilsonLo, b.WilsonHi)
	}
	// Output:
	// [0.0, 0.5): 3 forecasts, mean 0.150, happened 0.33, 95% interval 0.06–0.79
	// [0.5, 1.0): 5 forecasts, mean 0.790, happened 0.80, 95% interval 0.38–0.96
}

// Quantile bands of the price of two outcomes over three runs, saved as PNG
// and SVG.
func ExampleQuantileBands() {
	dir, err := os.MkdirTemp("", "simplot")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	truth := []float64{0.6, 0.6, 0.6, 0.6}
	fig, err := simplot.QuantileBands([]simplot.Paths{
		{Name: "YES", Truth: truth, Runs: [][]float64{
			{0.5, 0.55, 0.58, 0.61},
			{0.5, 0.52, 0.57, 0.59},
			{0.5, 0.49, 0.55, 0.6},
		}},
		{Name: "NO", Runs: [][]float64{
			{0.5, 0.45, 0.42, 0.39},
			{0.5, 0.48, 0.43, 0.41},
			{0.5, 0.51, 0.45, 0.4},
		}},
	}, simplot.Options{
		Title:  "Price over 3 runs",
		XLabel: "trades",
		YLabel: "price (probability)",
		YMin:   simplot.Float(0), YMax: simplot.Float(1),
		Percent: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"bands.png", "bands.svg"} {
		if err := fig.Save(filepath.Join(dir, name)); err != nil {
			log.Fatal(err)
		}
	}

	f, err := os.Open(filepath.Join(dir, "bands.png"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		log.Fatal(err)
	}
	w, h := fig.Size()
	fmt.Printf("figure: %.1f × %.1f inches\n", w.Points()/72, h.Points()/72)
	fmt.Printf("wrote bands.png: %d × %d pixels\n", img.Bounds().Dx(), img.Bounds().Dy())
	// Output:
	// figure: 6.8 × 3.2 inches
	// wrote bands.png: 1020 × 479 pixels
}
