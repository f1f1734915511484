package partner

import (
	"sync"
	"time"
)

// keyCache maps key hashes to the partners they authenticate (see
// Service.CacheKeys). Partners are few and made by an operator, so one map
// holds them all and nothing is swept; an unknown key is never cached, so
// guessing keys cannot fill it.
type keyCache struct {
	mu  sync.RWMutex
	ttl time.Duration
	// epoch counts invalidations. A look-up in the store that started
	// before one may have read what it removed, so its result is not
	// cached.
	epoch uint64
	m     map[[32]byte]cachedPartner
}

type cachedPartner struct {
	p     Partner
	until time.Time
}

// set turns the cache on for ttl, or off (and empties it) for ttl ≤ 0.
func (c *keyCache) set(ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.ttl = max(ttl, 0)
	c.m = nil
}

// get returns the partner hash authenticates at now, if it is cached, and
// the epoch to pass to put after a store look-up.
func (c *keyCache) get(hash [32]byte, now time.Time) (*Partner, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e, ok := c.m[hash]; ok && c.ttl > 0 && now.Before(e.until) {
		p := e.p
		return &p, c.epoch
	}
	return nil, c.epoch
}

// put caches p for hash until now+TTL, unless an invalidation came since
// epoch.
func (c *keyCache) put(hash [32]byte, p *Partner, now time.Time, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ttl == 0 || c.epoch != epoch {
		return
	}
	if c.m == nil {
		c.m = map[[32]byte]cachedPartner{}
	}
	c.m[hash] = cachedPartner{p: *p, until: now.Add(c.ttl)}
}

// invalidate drops partner id's entries, or every entry for id 0.
func (c *keyCache) invalidate(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if id == 0 {
		c.m = nil
		return
	}
	for h, e := range c.m {
		if e.p.ID == id {
			delete(c.m, h)
		}
	}
}
