package server

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// qrSVG returns a QR code of text as a data: URL of an SVG image: one
// square per module on a white square with the quiet zone the standard
// asks for, the dark modules of each row drawn as one path of runs, so
// that the image of a 42-character address is about 3 KB and scales to
// any size without blurring (crispEdges keeps the modules sharp).
//
// Medium error correction: an address on a screen is not scuffed, and a
// smaller code is easier to scan from a phone.
func qrSVG(text string) (string, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svgOf(q.Bitmap())), nil
}

// svgOf draws bitmap (rows of modules, true for dark) as an SVG whose
// unit is one module.
func svgOf(bitmap [][]bool) []byte {
	n := strconv.Itoa(len(bitmap))
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + n + ` ` + n + `" shape-rendering="crispEdges">`)
	b.WriteString(`<rect width="` + n + `" height="` + n + `" fill="#fff"/><path fill="#000" d="`)
	for y, row := range bitmap {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	return []byte(b.String())
}
