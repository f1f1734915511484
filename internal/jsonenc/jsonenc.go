// Package jsonenc holds what the hand-written JSON encoders of the server
// and the market package share: encoding/json's way of writing a number,
// so that their bytes are encoding/json's.
package jsonenc

import (
	"math"
	"strconv"
)

// AppendFloat appends f as encoding/json writes a float64; ok is false
// for NaN and the infinities, which JSON has no number for.
func AppendFloat(b []byte, f float64) (_ []byte, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
