package changelog

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Memory is a change log in process memory: the memory store's, and what
// a program embedding the packages without a database can use.
//
// A caller appends the entries of one change under the same lock that
// makes the change visible, so that append order is commit order.
type Memory struct {
	mu      sync.Mutex
	entries []Entry // ascending Seq
	last    int64
	pruned  int64
	// cursors are the consumers' (SetCursor): pruning keeps every entry
	// after the smallest.
	cursors map[string]int64
	// appended is closed, and replaced, at every Append: a broadcast to
	// everyone waiting for news.
	appended chan struct{}
}

// NewMemory returns an empty log.
func NewMemory() *Memory {
	return &Memory{appended: make(chan struct{})}
}

// Append gives es the next sequence numbers, in order, and keeps them.
// It sets each entry's Seq, and At where it is zero.
func (m *Memory) Append(es ...Entry) {
	if len(es) == 0 {
		return
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range es {
		m.last++
		es[i].Seq = m.last
		if es[i].At.IsZero() {
			es[i].At = now
		}
		m.entries = append(m.entries, es[i])
	}
	close(m.appended)
	m.appended = make(chan struct{})
}

// Changes returns at most limit entries with a Seq larger than after,
// in ascending order.
func (m *Memory) Changes(_ context.Context, after int64, limit int) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].Seq > after })
	n := min(limit, len(m.entries)-i)
	if n <= 0 {
		return nil, nil
	}
	return append([]Entry(nil), m.entries[i:i+n]...), nil
}

// ChangeBounds returns the part of the log Memory holds.
func (m *Memory) ChangeBounds(context.Context) (Bounds, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Bounds{Pruned: m.pruned, Last: m.last}, nil
}

// Appended returns a channel that is closed at the next Append.
func (m *Memory) Appended() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appended
}

// Prune drops the entries made before before, oldest first, and returns
// how many it dropped. It stops at the first entry made at or after
// before, so that what remains is always a suffix of the log, and at the
// first entry a consumer has not read (SetCursor).
func (m *Memory) Prune(_ context.Context, before time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	hold := int64(1<<63 - 1)
	for _, c := range m.cursors {
		hold = min(hold, c)
	}
	n := 0
	for n < len(m.entries) && m.entries[n].At.Before(before) && m.entries[n].Seq <= hold {
		n++
	}
	if n == 0 {
		return 0, nil
	}
	m.pruned = m.entries[n-1].Seq
	// Copy, so that the pruned entries' memory is freed rather than kept
	// behind the slice's start.
	m.entries = append([]Entry(nil), m.entries[n:]...)
	return n, nil
}

// Cursor returns the seq consumer name has read the log up to, and
// whether it has a cursor at all.
func (m *Memory) Cursor(name string) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cursors[name]
	return c, ok
}

// SetCursor records that consumer name has read the log up to after (a
// cursor never moves back): until it moves on, Prune keeps every entry
// after it, so that a consumer that must see every entry (a webhook
// dispatcher, a maintained aggregate) misses none however long it is
// away.
func (m *Memory) SetCursor(name string, after int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cursors == nil {
		m.cursors = map[string]int64{}
	}
	if c, ok := m.cursors[name]; !ok || after > c {
		m.cursors[name] = after
	}
}

// DropCursor forgets consumer name's cursor: pruning no longer waits for
// it.
func (m *Memory) DropCursor(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cursors, name)
}
