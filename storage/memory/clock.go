package memory

import "time"

// SetClock replaces the clock that stamps what the store records (users,
// trades and their ledger postings, price points, settlements, comments,
// notifications…); nil restores the real one. The demo data (see
// server/demo_history.go) uses it to record a history of past days
// through the ordinary money path, rather than writing past records by
// hand. The clock must return UTC times truncated to microseconds, as
// the default does, and should not go backwards while trades are made:
// the store keeps each market's trades in the order they were made.
func (s *Store) SetClock(now func() time.Time) {
	if now == nil {
		now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}
