// Package simplot draws the figures of a simulation study: quantile bands
// over many runs, reliability diagrams, metrics against a swept parameter
// and histograms, as PNG or SVG.
//
// The package takes plain slices, so it serves any simulation. Every figure
// follows the same conventions: round ticks (1, 2 or 5 times a power of
// ten), a colour-blind-safe palette, one small multiple per panel with
// shared axes, and a legend above the panels, where it cannot cover the
// data.
//
// Non-finite values (NaN, ±Inf) are refused with an error, not skipped: in
// a simulation they mean a bug upstream, and a figure that quietly leaves
// them out would mislead. Every error wraps ErrInput.
package simplot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrInput is wrapped by every error about the data or options given to a
// figure.
var ErrInput = errors.New("simplot: bad input")

func inputErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
}

// Options are the labels and layout shared by every figure.
type Options struct {
	// Title is the figure's title; XLabel and YLabel name the axes with
	// their units, e.g. "price of YES (probability)", "trades", "kopecks".
	Title, XLabel, YLabel string
	// Width and Height are the figure's size; 0 chooses a size that grows
	// with the number of panels.
	Width, Height vg.Length
	// Columns is the number of small multiples per row; 0 chooses it from
	// the number of panels.
	Columns int
	// YMin and YMax fix the y range, e.g. 0 and 1 for probabilities; nil
	// takes it from the data.
	YMin, YMax *float64
	// Percent labels the y ticks as percentages (0%, 20%, …), and the x
	// ticks too where x is a probability, as in Calibration.
	Percent bool
	// DPI is the resolution of a PNG; 0 means 150 dots per inch.
	DPI int
}

// Float returns a pointer to v, for Options.YMin and Options.YMax.
func Float(v float64) *float64 { return &v }

const (
	defaultDPI   = 150
	panelWidth   = 3.4 * vg.Inch
	panelHeight  = 2.5 * vg.Inch
	singleWidth  = 6.5 * vg.Inch
	singleHeight = 4.2 * vg.Inch
	minSide      = vg.Inch
)

// Palette is the Okabe–Ito palette, ordered so that the first colours are
// the most distinct on white; readers with any common colour-vision
// deficiency can still tell them apart.
var Palette = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
	color.RGBA{R: 0xF0, G: 0xE4, B: 0x42, A: 0xFF}, // yellow
}

// Color returns the i-th colour of the palette, cycling past its end.
func Color(i int) color.Color { return Palette[i%len(Palette)] }

// faded returns c with the given opacity, for bands drawn under a line.
func faded(c color.Color, alpha uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: alpha}
}

var dashed = []vg.Length{vg.Points(5), vg.Points(3)}

// Figure is a finished plot, possibly a grid of small multiples.
type Figure struct {
	title  string
	panels []*plot.Plot
	cols   int
	legend []legendEntry
	width  vg.Length
	height vg.Length
	dpi    int
	// xLabel, when set, is drawn once under the whole grid instead of
	// under each bottom panel: see Sweep's log axis.
	xLabel string
}

type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// Size returns the figure's width and height.
func (f *Figure) Size() (width, height vg.Length) { return f.width, f.height }

// Save writes the figure to path, as PNG or SVG by the file's extension.
func (f *Figure) Save(path string) (err error) {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if format != "png" && format != "svg" {
		return inputErr("cannot save %q: the extension must be .png or .svg", path)
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}()
	return f.Encode(file, format)
}

// Encode writes the figure to w in the given format, "png" or "svg".
func (f *Figure) Encode(w io.Writer, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(f.dpi))}
	case "svg":
		c = vgsvg.New(f.width, f.height)
	default:
		return inputErr("unknown format %q: want png or svg", format)
	}
	f.draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

func (f *Figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(6)
	c = draw.Crop(c, pad, -pad, pad, -pad)

	if f.title != "" {
		sty := textStyle(13)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y}, f.title)
		c.Max.Y -= sty.Height(f.title) + vg.Points(6)
	}
	if len(f.legend) > 0 {
		c.Max.Y -= f.drawLegend(c) + vg.Points(4)
	}

	if f.xLabel != "" {
		sty := textStyle(9)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Min.Y + vg.Points(2)}, f.xLabel)
		c.Min.Y += sty.Height(f.xLabel) + vg.Points(6)
	}

	rows := (len(f.panels) + f.cols - 1) / f.cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, f.cols)
		for col := range f.cols {
			if i := r*f.cols + col; i < len(f.panels) {
				grid[r][col] = f.panels[i]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: f.cols, PadX: vg.Points(10), PadY: vg.Points(10)}
	canvases := plot.Align(grid, tiles, c)
	for r := range grid {
		for col, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][col])
			}
		}
	}
}

// drawLegend lays the entries out in rows across the top of c and returns
// the height it used.
func (f *Figure) drawLegend(c draw.Canvas) vg.Length {
	sty := textStyle(9)
	sty.YAlign = draw.YCenter
	lineH := sty.Height("Mg") + vg.Points(4)
	thumbW, gap := vg.Points(20), vg.Points(14)

	// Break the entries into rows that fit the width, then centre each row.
	var rows [][]legendEntry
	var widths []vg.Length
	var row []legendEntry
	var w vg.Length
	for _, e := range f.legend {
		ew := thumbW + vg.Points(4) + sty.Width(e.name)
		if len(row) > 0 && w+gap+ew > c.Max.X-c.Min.X {
			rows, widths = append(rows, row), append(widths, w)
			row, w = nil, 0
		}
		if len(row) > 0 {
			w += gap
		}
		row, w = append(row, e), w+ew
	}
	rows, widths = append(rows, row), append(widths, w)

	y := c.Max.Y - lineH/2
	for i, row := range rows {
		x := c.Center().X - widths[i]/2
		for _, e := range row {
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - lineH/2 + vg.Points(2)},
				Max: vg.Point{X: x + thumbW, Y: y + lineH/2 - vg.Points(2)},
			}}
			e.thumb.Thumbnail(&thumb)
			x += thumbW + vg.Points(4)
			c.FillText(sty, vg.Point{X: x, Y: y}, e.name)
			x += sty.Width(e.name) + gap
		}
		y -= lineH
	}
	return lineH * vg.Length(len(rows))
}

func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		Handler: plot.DefaultTextHandler,
	}
}

// layout returns the columns and size of a figure of n panels.
func layout(n int, o Options) (cols int, w, h vg.Length, err error) {
	if o.Width < 0 || o.Height < 0 || o.Columns < 0 || o.DPI < 0 {
		return 0, 0, 0, inputErr("negative size, columns or DPI")
	}
	if (o.Width != 0 && o.Width < minSide) || (o.Height != 0 && o.Height < minSide) {
		return 0, 0, 0, inputErr("a figure of %.0f × %.0f points is too small to read: want at least %.0f points (1 inch) a side", o.Width.Points(), o.Height.Points(), minSide.Points())
	}
	cols = o.Columns
	if cols == 0 {
		switch {
		case n <= 3:
			cols = n
		case n == 4:
			cols = 2
		default:
			cols = 3
		}
	}
	cols = min(cols, n)
	rows := (n + cols - 1) / cols
	w, h = o.Width, o.Height
	// Room for the title and the legend above the panels.
	extra := vg.Points(50)
	if w == 0 {
		w = max(vg.Length(cols)*panelWidth, singleWidth)
	}
	if h == 0 {
		if n == 1 {
			h = singleHeight + extra
		} else {
			h = vg.Length(rows)*panelHeight + extra
		}
	}
	return cols, w, h, nil
}

// newFigure builds the empty panels of a figure, labelled so that only the
// outer panels repeat the axis labels.
func newFigure(titles []string, o Options) (*Figure, error) {
	n := len(titles)
	cols, w, h, err := layout(n, o)
	if err != nil {
		return nil, err
	}
	dpi := o.DPI
	if dpi == 0 {
		dpi = defaultDPI
	}
	f := &Figure{title: o.Title, cols: cols, width: w, height: h, dpi: dpi}
	for i, title := range titles {
		p := plot.New()
		p.Title.Text = title
		p.Title.TextStyle.Font.Size = 10
		p.Title.Padding = vg.Points(4)
		if i+cols >= n {
			p.X.Label.Text = o.XLabel
		}
		if i%cols == 0 {
			p.Y.Label.Text = o.YLabel
		}
		for _, a := range []*plot.Axis{&p.X, &p.Y} {
			a.Label.TextStyle.Font.Size = 9
			a.Tick.Label.Font.Size = 8
			a.Tick.Marker = RoundTicks{}
			a.Padding = vg.Points(2)
		}
		p.Y.Tick.Marker = RoundTicks{Percent: o.Percent}
		grid := plotter.NewGrid()
		grid.Vertical.Color = color.Gray{Y: 225}
		grid.Horizontal.Color = color.Gray{Y: 225}
		p.Add(grid)
		f.panels = append(f.panels, p)
	}
	return f, nil
}

func (f *Figure) addLegend(name string, thumb plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{name: name, thumb: thumb})
}

// setY fixes the y range of every panel: the options' bounds where given,
// else the data's range widened to round ticks.
func (f *Figure) setY(lo, hi float64, o Options, integer bool) error {
	lo, hi = roundRange(lo, hi, integer)
	if o.YMin != nil {
		lo = *o.YMin
	}
	if o.YMax != nil {
		hi = *o.YMax
	}
	if !finite(lo) || !finite(hi) || lo > hi {
		return inputErr("y range [%g, %g] is empty or not finite", lo, hi)
	}
	for _, p := range f.panels {
		p.Y.Min, p.Y.Max = lo, hi
	}
	return nil
}

// setX fixes the x range of every panel, widened to round ticks.
func (f *Figure) setX(lo, hi float64) {
	lo, hi = roundRange(lo, hi, false)
	for _, p := range f.panels {
		p.X.Min, p.X.Max = lo, hi
	}
}

// span tracks the range of the values it is shown.
type span struct{ lo, hi float64 }

func newSpan() span { return span{math.Inf(1), math.Inf(-1)} }

func (s *span) add(vs ...float64) {
	for _, v := range vs {
		s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
	}
}

// checkFinite returns an error naming what holds a non-finite value.
func checkFinite(what string, vs []float64) error {
	for i, v := range vs {
		if !finite(v) {
			return inputErr("%s[%d] is %g", what, i, v)
		}
	}
	return nil
}

// band is the shaded area between lo and hi over x.
func band(x, lo, hi []float64, c color.Color) (*plotter.Polygon, error) {
	ring := make(plotter.XYs, 0, 2*len(x))
	for i := range x {
		ring = append(ring, plotter.XY{X: x[i], Y: lo[i]})
	}
	for i := len(x) - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: x[i], Y: hi[i]})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, err
	}
	poly.Color = c
	poly.LineStyle.Width = 0
	return poly, nil
}

func line(x, y []float64, c color.Color, width vg.Length, dashes []vg.Length) (*plotter.Line, error) {
	xys := make(plotter.XYs, len(x))
	for i := range x {
		xys[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = c, width, dashes
	return l, nil
}
