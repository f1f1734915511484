package server

// The card image of a shared event (GET /og/events/{id}.png): 1200×630,
// the size Open Graph and Twitter's large card show without cropping,
// drawn with golang.org/x/image in the Go fonts, which cover Latin,
// Greek and Cyrillic (a Russian name renders).

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The card's size.
const (
	cardWidth  = 1200
	cardHeight = 630
)

// The card's layout, in pixels.
const (
	cardPad        = 64
	cardTitleSize  = 54
	cardTitleLine  = 66
	cardTitleLines = 2
	cardRowSize    = 28
	cardRowHeight  = 58
	cardBarX       = 620 // the bars' left edge
	cardBarWidth   = 360
	cardBarHeight  = 24
	cardFooterSize = 28
	cardFooterBase = cardHeight - 44 // the footer's baseline
)

var (
	cardBackground = color.RGBA{0xff, 0xff, 0xff, 0xff}
	cardAccent     = color.RGBA{0x1d, 0x4e, 0xd8, 0xff} // the bars and the left stripe
	cardText       = color.RGBA{0x0f, 0x17, 0x2a, 0xff}
	cardMuted      = color.RGBA{0x47, 0x55, 0x69, 0xff}
	cardTrack      = color.RGBA{0xe2, 0xe8, 0xf0, 0xff}
)

// cardFonts are the parsed Go fonts, read once. A parsed font is safe for
// concurrent use; the faces made of it (opentype.Face) are not, so each
// render makes its own.
var cardFonts = sync.OnceValues(func() (*cardFontSet, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("share card: the regular font: %w", err)
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("share card: the bold font: %w", err)
	}
	return &cardFontSet{regular: regular, bold: bold}, nil
})

type cardFontSet struct{ regular, bold *opentype.Font }

func (s *cardFontSet) face(f *opentype.Font, size float64) (font.Face, error) {
	return opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
}

// renderCard draws c and encodes it as PNG.
func renderCard(c *shareCard) ([]byte, error) {
	fonts, err := cardFonts()
	if err != nil {
		return nil, err
	}
	title, err := fonts.face(fonts.bold, cardTitleSize)
	if err != nil {
		return nil, err
	}
	row, err := fonts.face(fonts.regular, cardRowSize)
	if err != nil {
		return nil, err
	}
	rowBold, err := fonts.face(fonts.bold, cardRowSize)
	if err != nil {
		return nil, err
	}
	footer, err := fonts.face(fonts.bold, cardFooterSize)
	if err != nil {
		return nil, err
	}

	img := image.NewRGBA(image.Rect(0, 0, cardWidth, cardHeight))
	fill(img, img.Rect, cardBackground)
	fill(img, image.Rect(0, 0, 16, cardHeight), cardAccent)

	textWidth := cardWidth - 2*cardPad
	y := cardPad + cardTitleSize
	for _, line := range wrapText(title, c.Title, textWidth, cardTitleLines) {
		drawText(img, title, cardText, cardPad, y, line)
		y += cardTitleLine
	}

	footerTop := cardFooterBase - cardFooterSize - 8
	top := y + 24
	fit := max((footerTop-top)/cardRowHeight, 1)
	rows := c.Rows
	more := 0
	if len(rows) > fit {
		more = len(rows) - (fit - 1)
		rows = rows[:fit-1]
	}
	labelWidth := cardBarX - cardPad - 24
	for i, r := range rows {
		base := top + i*cardRowHeight + cardRowSize
		drawText(img, row, cardText, cardPad, base, ellipsize(row, r.Name, labelWidth))
		barTop := base - cardBarHeight + 4
		fill(img, image.Rect(cardBarX, barTop, cardBarX+cardBarWidth, barTop+cardBarHeight), cardTrack)
		w := int(min(max(r.Prob, 0), 1)*cardBarWidth + 0.5)
		fill(img, image.Rect(cardBarX, barTop, cardBarX+w, barTop+cardBarHeight), cardAccent)
		label := ellipsize(rowBold, r.Label, cardWidth-cardPad-(cardBarX+cardBarWidth+20))
		drawText(img, rowBold, cardText, cardWidth-cardPad-measure(rowBold, label), base, label)
	}
	if more > 0 {
		base := top + len(rows)*cardRowHeight + cardRowSize
		drawText(img, row, cardMuted, cardPad, base, fmt.Sprintf("+ %d more", more))
	}
	if len(c.Rows) == 0 {
		drawText(img, row, cardMuted, cardPad, top+cardRowSize, "No markets yet")
	}

	base := cardFooterBase
	drawText(img, footer, cardAccent, cardPad, base, "predictkit")
	legend := "YES price"
	drawText(img, footer, cardMuted, cardWidth-cardPad-measure(footer, legend), base, legend)

	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func fill(img draw.Image, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

func drawText(img draw.Image, face font.Face, c color.Color, x, y int, s string) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func measure(face font.Face, s string) int {
	return font.MeasureString(face, s).Ceil()
}

// wrapText breaks s into at most maxLines lines no wider than width,
// at spaces (a word wider than a line is broken between letters); what
// does not fit ends the last line with "…".
func wrapText(face font.Face, s string, width, maxLines int) []string {
	words := strings.Fields(s)
	var lines []string
	cur := ""
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if measure(face, next) <= width {
			cur = next
			continue
		}
		if cur == "" {
			// One word wider than the line: as much of it as fits.
			head := fitPrefix(face, w, width)
			lines = append(lines, head)
			words[i] = w[len(head):]
			i--
		} else {
			lines = append(lines, cur)
			cur = ""
			i--
		}
		if len(lines) == maxLines {
			rest := strings.Join(append(strings.Fields(cur), words[i+1:]...), " ")
			lines[maxLines-1] = ellipsize(face, strings.TrimSpace(lines[maxLines-1]+" "+rest), width)
			return lines
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	if len(lines) > maxLines {
		lines = lines[:maxLines]
	}
	return lines
}

// fitPrefix is the longest prefix of s (whole runes, at least one) no
// wider than width.
func fitPrefix(face font.Face, s string, width int) string {
	n := 0
	for i, r := range s {
		end := i + utf8.RuneLen(r)
		if n > 0 && measure(face, s[:end]) > width {
			break
		}
		n = end
	}
	return s[:n]
}

// ellipsize returns s when it fits width, else its longest prefix that
// fits with "…" after it.
func ellipsize(face font.Face, s string, width int) string {
	if measure(face, s) <= width {
		return s
	}
	const dots = "…"
	head := fitPrefix(face, s, width-measure(face, dots))
	for len(head) > 0 && measure(face, head+dots) > width {
		_, size := utf8.DecodeLastRuneInString(head)
		head = head[:len(head)-size]
	}
	return strings.TrimRight(head, " ") + dots
}
