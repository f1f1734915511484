package bench

import (
	"fmt"
	"slices"
	"testing"
)

func TestIDSetKeepsIDsInAnyOrder(t *testing.T) {
	var s idSet
	ids := []int64{1000, 1001, 1063, 1064, 999, 5, 70000, 1000}
	news := []bool{true, true, true, true, true, true, true, false}
	for i, id := range ids {
		if got := s.add(id); got != news[i] {
			t.Errorf("add(%d) = %v, want %v", id, got, news[i])
		}
	}
	for _, id := range ids {
		if !s.has(id) {
			t.Errorf("has(%d) = false after add", id)
		}
	}
	for _, id := range []int64{0, 4, 6, 998, 1002, 1062, 1065, 69999, 70001, 1 << 40} {
		if s.has(id) {
			t.Errorf("has(%d) = true, never added", id)
		}
	}
	if s.len() != 7 {
		t.Errorf("len %d, want 7", s.len())
	}
}

// delivered is one message as a subscriber's tally sees it.
type delivered struct {
	id    int64
	typ   string // "trade" if empty
	trade int64
	noID  bool
}

func TestTallyCountsGapsDuplicatesAndDisorder(t *testing.T) {
	answered := []int64{101, 102, 103, 104}
	cases := []struct {
		name string
		// each subscriber's messages, in the order they arrived
		streams [][]delivered
		want    tallyTotals
	}{
		{"every trade once and in order is sound",
			[][]delivered{{{10, "", 101, false}, {11, "price", 0, false}, {12, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, messages: 5, tradeMsgs: 4}},
		{"a missing trade is a gap of its subscriber only",
			[][]delivered{
				{{10, "", 101, false}, {12, "", 102, false}, {16, "", 104, false}},
				{{10, "", 101, false}, {12, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}},
			},
			tallyTotals{expected: 8, delivered: 7, gaps: 1, subscribersWithGaps: 1, messages: 7, tradeMsgs: 7}},
		{"a trade delivered twice is one duplicate, not disorder",
			[][]delivered{{{10, "", 101, false}, {12, "", 102, false}, {12, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, duplicates: 1, messages: 5, tradeMsgs: 5}},
		{"a trade resent under a new id after a reconnection is a duplicate",
			[][]delivered{{{10, "", 101, false}, {12, "", 102, false}, {13, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, duplicates: 1, messages: 5, tradeMsgs: 5}},
		{"two trades swapped are one out of order",
			[][]delivered{{{10, "", 101, false}, {14, "", 103, false}, {12, "", 102, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, outOfOrder: 1, messages: 4, tradeMsgs: 4}},
		{"ids that rise while trade ids fall are out of order",
			[][]delivered{{{10, "", 101, false}, {12, "", 103, false}, {14, "", 102, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, outOfOrder: 1, messages: 4, tradeMsgs: 4}},
		{"a price message whose id goes back is out of order",
			[][]delivered{{{10, "", 101, false}, {12, "", 102, false}, {11, "price", 0, false}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, outOfOrder: 1, messages: 5, tradeMsgs: 4}},
		{"a message without an id is counted",
			[][]delivered{{{10, "", 101, false}, {0, "", 102, true}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, noID: 1, messages: 4, tradeMsgs: 4}},
		{"a reset is counted",
			[][]delivered{{{9, "reset", 0, false}, {10, "", 101, false}, {12, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 4, delivered: 4, resets: 1, messages: 5, tradeMsgs: 4}},
		{"a trade nobody answered is unexpected",
			[][]delivered{{{10, "", 101, false}, {12, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}, {18, "", 999, false}}},
			tallyTotals{expected: 4, delivered: 4, unexpected: 1, messages: 5, tradeMsgs: 5}},
		{"a subscriber that got nothing owes every trade",
			[][]delivered{{}, {{10, "", 101, false}, {12, "", 102, false}, {14, "", 103, false}, {16, "", 104, false}}},
			tallyTotals{expected: 8, delivered: 4, gaps: 4, subscribersWithGaps: 1, messages: 4, tradeMsgs: 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tallies []*tally
			for _, stream := range c.streams {
				tl := &tally{}
				for _, m := range stream {
					if m.typ == "" {
						tl.trade(m.id, !m.noID, m.trade)
					} else {
						tl.message(m.id, !m.noID, m.typ)
					}
				}
				tallies = append(tallies, tl)
			}
			got := totals(tallies, slices.Clone(answered))
			sound := got.gaps == 0 && got.duplicates == 0 && got.outOfOrder == 0 && got.noID == 0 && got.resets == 0 && got.unexpected == 0
			if len(got.problems) == 0 && !sound {
				t.Errorf("no problem described for %+v", got)
			}
			got.problems = nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", c.want) {
				t.Errorf("totals\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}
