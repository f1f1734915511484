package postgres

import (
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
)

// TestRowColumns checks that the scanners and argument builders of the
// row files take as many columns as the tables the statements are made
// from.
func TestRowColumns(t *testing.T) {
	posDest, _ := positionDest(&market.Position{})
	trDest, _ := tradeDest(&market.Trade{})
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"positionDest", len(posDest), len(positionColumns)},
		{"newPositionArgs", len(newPositionArgs(nil)), len(newPositionColumns)},
		{"updatePositionArgs", len(updatePositionArgs(nil, nil)), len(changedPositionColumns)},
		{"tradeDest", len(trDest), len(tradeColumns)},
		{"tradeArgs", len(tradeArgs(nil)), len(newTradeColumns)},
		{"priceArgs", len(priceArgs(nil, nil, time.Time{})), len(priceParams)},
		{"pnlArgs", len(pnlArgs(nil, nil, time.Time{})), len(pnlParams)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d columns, want %d", c.name, c.got, c.want)
		}
	}
}
