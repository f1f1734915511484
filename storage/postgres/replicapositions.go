package postgres

import (
	"sync"
	"time"
)

// positions remembers, per user, the WAL position that user's reads must
// see, for life (a replica that is used at all has anything older). At
// most max users are kept; past that, one shared position stands for
// every user left out, so that bounding memory costs some reads a wait,
// never a stale answer.
type positions struct {
	mu       sync.Mutex
	max      int
	life     time.Duration
	users    map[int64]position
	overflow position
	swept    time.Time
}

type position struct {
	lsn uint64
	at  time.Time
}

func newPositions(max int, life time.Duration) *positions {
	return &positions{max: max, life: life, users: map[int64]position{}}
}

func (p *positions) put(user int64, lsn uint64, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.users[user]; ok || len(p.users) < p.max || p.sweep(now) {
		if ok && old.lsn > lsn && now.Sub(old.at) <= p.life {
			lsn = old.lsn
		}
		p.users[user] = position{lsn: lsn, at: now}
		return
	}
	p.overflow = position{lsn: max(lsn, p.overflow.lsnIfLive(now, p.life)), at: now}
}

// get returns the position user's reads must see now (0: any).
func (p *positions) get(user int64, now time.Time) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	need := p.overflow.lsnIfLive(now, p.life)
	if u, ok := p.users[user]; ok {
		need = max(need, u.lsnIfLive(now, p.life))
	}
	return need
}

func (q position) lsnIfLive(now time.Time, life time.Duration) uint64 {
	if now.Sub(q.at) > life {
		return 0
	}
	return q.lsn
}

// sweep drops the positions past their life, at most once a second (it
// reads them all), and reports whether there is room now.
func (p *positions) sweep(now time.Time) bool {
	if now.Sub(p.swept) < time.Second {
		return false
	}
	p.swept = now
	for id, u := range p.users {
		if now.Sub(u.at) > p.life {
			delete(p.users, id)
		}
	}
	return len(p.users) < p.max
}
