package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// placeOutputs makes the output directory (a new temporary one when -out
// is not given) and puts the output files in it: a relative name is
// taken within it, an absolute path as given. With no output asked for
// it makes nothing.
func (c *config) placeOutputs() error {
	paths := []*string{&c.csvPath, &c.pricesPath, &c.pnlPath}
	if c.exclusive {
		paths = append(paths, &c.sumsPath)
	}
	if !c.exclusive && !c.split && !c.sweep {
		paths = append(paths, &c.figures.calibrationPath)
	}
	if c.sweep {
		paths = []*string{&c.csvPath, &c.summaryPath}
	}
	if !slices.ContainsFunc(paths, func(p *string) bool { return *p != "" }) && !(c.sweep && len(c.figures.plotMetrics) > 0) {
		return nil
	}
	if c.outDir == "" {
		dir, err := os.MkdirTemp("", "predictkit-simulate-")
		if err != nil {
			return err
		}
		c.outDir = dir
	} else if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	for _, p := range paths {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(c.outDir, *p)
		}
	}
	return nil
}

// wrote is the summary's last line: the directory, and the files written
// into it (the CSV with its rows).
func (c *config) wrote(rows int, plots ...string) string {
	name := func(p string) string {
		if rel, err := filepath.Rel(c.outDir, p); err == nil && filepath.IsLocal(rel) {
			return rel
		}
		return p
	}
	var outs []string
	if c.csvPath != "" {
		outs = append(outs, fmt.Sprintf("%s (%d rows)", name(c.csvPath), rows))
	}
	for _, p := range plots {
		if p != "" {
			outs = append(outs, name(p))
		}
	}
	if len(outs) == 0 {
		return ""
	}
	return fmt.Sprintf("wrote into %s: %s\n", c.outDir, strings.Join(outs, ", "))
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}
