package server

// What a shared event shows, wherever it is shown: the Open Graph tags of
// its page, its card image and its oEmbed answer all read one shareCard,
// so that they agree with each other and change together.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/predictkit/predictkit/market"
)

// shareCard is what a share of an event shows: its name and, per market,
// the current YES price (or how it resolved).
type shareCard struct {
	EventID int64
	Title   string
	Rows    []shareRow
	// FirstMarket is the event's first market (its first pool's first),
	// the one an oEmbed of the event frames; 0 for an event without one.
	FirstMarket int64
}

// shareRow is one market of a card.
type shareRow struct {
	Name string
	// Prob is the YES price, 0..1, as the API's yes_probability.
	Prob float64
	// Label is what the card prints beside the bar: "58.8%", or how the
	// market resolved ("YES won", "NO won", "Void").
	Label string
}

// shareable reports whether e may be shared: listed (active) and approved.
// An inactive event is reachable by id in the API, but a share would put
// it in front of everyone; a proposal is not the creator's to show yet.
// Both get the plain page, the same as an unknown id.
func shareable(e *market.Event) bool {
	return e.IsActive && e.Status == market.StatusApproved
}

// newShareCard reads the card of e, whose markets are priced
// (market.Service.Event prices exclusive pools as one).
func newShareCard(e *market.Event) *shareCard {
	c := &shareCard{EventID: e.ID, Title: e.Name}
	for _, p := range e.Pools {
		for _, m := range p.Markets {
			if c.FirstMarket == 0 {
				c.FirstMarket = m.ID
			}
			c.Rows = append(c.Rows, newShareRow(m))
		}
	}
	return c
}

func newShareRow(m *market.Market) shareRow {
	r := shareRow{Name: m.Name, Prob: m.YesProbability()}
	switch m.Outcome() {
	case "YES":
		r.Label, r.Prob = "YES won", 1
	case "NO":
		r.Label, r.Prob = "NO won", 0
	case market.OutcomeVoid:
		r.Label, r.Prob = "Void", 0
	default:
		r.Label = percent(r.Prob)
	}
	return r
}

// percent prints a probability as the app does: one decimal, "58.8%".
func percent(p float64) string {
	return fmt.Sprintf("%.1f%%", p*100)
}

// Version identifies what the card shows: the same for the same title and
// labels, another after a trade that moved a printed price. The card's
// image is cached under it and its ETag is made of it.
func (c *shareCard) Version() string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00", c.EventID, c.Title)
	for _, r := range c.Rows {
		// The bar is drawn to the pixel from Prob: a move that changes
		// no label may still move a bar, so Prob is part of the version
		// at the bar's resolution (1/1000 of its width and more).
		fmt.Fprintf(h, "%s\x00%s\x00%.4f\x00", r.Name, r.Label, r.Prob)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// maxDescriptionRows is how many markets a description names; the rest
// are "…".
const maxDescriptionRows = 4

// Description is the card's prices in one line, for og:description:
// "Northside FC: YES 58.8% · Southbridge: YES 30.1% · …".
func (c *shareCard) Description() string {
	if len(c.Rows) == 0 {
		return "No markets yet."
	}
	parts := make([]string, 0, maxDescriptionRows+1)
	for i, r := range c.Rows {
		if i == maxDescriptionRows {
			parts = append(parts, "…")
			break
		}
		if strings.HasSuffix(r.Label, "%") {
			parts = append(parts, r.Name+": YES "+r.Label)
		} else {
			parts = append(parts, r.Name+": "+r.Label)
		}
	}
	return strings.Join(parts, " · ")
}
