package bench

import (
	"fmt"
	"slices"
)

// idSet is a set of positive integers that lie close together (the trade
// ids of one run): a bitmap from the smallest id seen, one bit per id in
// the range, where a map would cost some 40 bytes per id and a thousand
// subscribers each keep one.
type idSet struct {
	base  int64 // the id of bit 0 of words[0]; a multiple of 64
	words []uint64
	n     int
}

func (s *idSet) has(id int64) bool {
	if len(s.words) == 0 || id < s.base {
		return false
	}
	i := (id - s.base) / 64
	return i < int64(len(s.words)) && s.words[i]&(1<<uint((id-s.base)%64)) != 0
}

// add inserts id and reports whether it was new.
func (s *idSet) add(id int64) bool {
	base := id - ((id%64)+64)%64
	switch {
	case len(s.words) == 0:
		s.base = base
	case base < s.base:
		// An id below every one before: shift the words up.
		grow := int((s.base - base) / 64)
		s.words = append(make([]uint64, grow, grow+len(s.words)), s.words...)
		s.base = base
	}
	i := int((id - s.base) / 64)
	for i >= len(s.words) {
		s.words = append(s.words, 0)
	}
	bit := uint64(1) << uint((id-s.base)%64)
	if s.words[i]&bit != 0 {
		return false
	}
	s.words[i] |= bit
	s.n++
	return true
}

func (s *idSet) len() int { return s.n }

// countIn returns how many of ids (sorted or not) are in s.
func (s *idSet) countIn(ids []int64) int {
	n := 0
	for _, id := range ids {
		if s.has(id) {
			n++
		}
	}
	return n
}

// tally is one subscriber's account of what its stream delivered, over
// every connection it made (a reconnection resumes the same account).
// Every message must have an id above the one before; every trade of the
// run must come once, in order. It is used by one goroutine at a time.
type tally struct {
	lastID    int64 // the largest message id seen
	lastTrade int64 // the largest trade id seen
	trades    idSet

	messages   int64 // every event dispatched, trades included
	tradeMsgs  int64 // trade messages, duplicates included
	duplicates int64 // trade messages of a trade already delivered
	outOfOrder int64 // messages whose id or trade id is below one before
	noID       int64 // messages without an id field or with a bad one
	resets     int64 // reset events
	foreign    int64 // trades of another market
	problems   []string
}

// maxProblems bounds the details a tally keeps.
const maxProblems = 3

func (t *tally) problem(format string, args ...any) {
	if len(t.problems) < maxProblems {
		t.problems = append(t.problems, fmt.Sprintf(format, args...))
	}
}

// message accounts for a message that is not a trade: its id must be
// above the last one's.
func (t *tally) message(id int64, ok bool, typ string) {
	t.messages++
	switch {
	case typ == "reset":
		t.resets++
		t.problem("a reset event at id %d: the server pruned entries this subscriber had not read", id)
	case !ok:
		t.noID++
		t.problem("a %s message without a valid id", typ)
		return
	case id <= t.lastID:
		t.outOfOrder++
		t.problem("a %s message with id %d after id %d", typ, id, t.lastID)
		return
	}
	t.lastID = max(t.lastID, id)
}

// trade accounts for a trade message of id carrying tradeID, and reports
// whether it is the first delivery of that trade (the one whose latency
// counts). A duplicate is counted as such, not also as out of order.
func (t *tally) trade(id int64, ok bool, tradeID int64) bool {
	t.messages++
	t.tradeMsgs++
	if !t.trades.add(tradeID) {
		t.duplicates++
		t.problem("trade %d delivered again at id %d", tradeID, id)
		return false
	}
	switch {
	case !ok:
		t.noID++
		t.problem("trade %d without a valid id", tradeID)
	case id <= t.lastID:
		t.outOfOrder++
		t.problem("trade %d at id %d after id %d", tradeID, id, t.lastID)
	case tradeID < t.lastTrade:
		t.outOfOrder++
		t.problem("trade %d at id %d after trade %d", tradeID, id, t.lastTrade)
	}
	if ok {
		t.lastID = max(t.lastID, id)
	}
	t.lastTrade = max(t.lastTrade, tradeID)
	return true
}

// tallyTotals sums the tallies of a run against the trades answered.
type tallyTotals struct {
	expected, delivered, gaps int64
	unexpected                int64 // delivered trades that were not answered
	subscribersWithGaps       int
	messages, tradeMsgs       int64
	duplicates, outOfOrder    int64
	noID, resets, foreign     int64
	problems                  []string
}

// totals checks every tally against answered, the trades whose buy or
// sell was answered 200 (each must reach every subscriber).
func totals(tallies []*tally, answered []int64) tallyTotals {
	answered = slices.Clone(answered)
	slices.Sort(answered)
	answered = slices.Compact(answered)
	var r tallyTotals
	for i, t := range tallies {
		got := int64(t.trades.countIn(answered))
		r.expected += int64(len(answered))
		r.delivered += got
		if miss := int64(len(answered)) - got; miss > 0 {
			r.gaps += miss
			r.subscribersWithGaps++
			if len(r.problems) < maxProblems {
				r.problems = append(r.problems, fmt.Sprintf("subscriber %d missed %d of %d trades, first %d", i, miss, len(answered), firstMissing(&t.trades, answered)))
			}
		}
		if extra := int64(t.trades.len()) - got; extra > 0 {
			r.unexpected += extra
			if len(r.problems) < maxProblems {
				r.problems = append(r.problems, fmt.Sprintf("subscriber %d got %d trades that no answer announced", i, extra))
			}
		}
		r.messages += t.messages
		r.tradeMsgs += t.tradeMsgs
		r.duplicates += t.duplicates
		r.outOfOrder += t.outOfOrder
		r.noID += t.noID
		r.resets += t.resets
		r.foreign += t.foreign
		for _, p := range t.problems {
			if len(r.problems) < 2*maxProblems {
				r.problems = append(r.problems, fmt.Sprintf("subscriber %d: %s", i, p))
			}
		}
	}
	return r
}

func firstMissing(s *idSet, sorted []int64) int64 {
	for _, id := range sorted {
		if !s.has(id) {
			return id
		}
	}
	return 0
}
