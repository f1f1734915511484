package account

import (
	"sync"
	"time"
)

// An Invalidation names cached authentications that a change made
// elsewhere (another process on the same database, an operator's SQL) has
// made stale. Service.Invalidate applies it.
type Invalidation struct {
	// TokenHash is a revoked token's HashToken, or nil.
	TokenHash []byte
	// UserID is a user whose record (profile, roles) changed, or 0.
	UserID int64
	// PartnerID is a partner whose record (its key, disabled) changed, or
	// 0. The Service ignores it; it is for partner.Service.Invalidate,
	// which caches partners by key, so that one feed of changes serves
	// both.
	PartnerID int64
	// All drops everything: the feed of changes was interrupted, so some
	// may have been missed.
	All bool
}

// authCache maps the hashes of access tokens and API keys to what they
// authenticate. Entries
// live in two generations: a lookup reads both, and the older is dropped
// when the newer is a TTL old, so memory holds about two TTLs' worth of
// distinct tokens and no sweeping is needed.
type authCache struct {
	mu  sync.RWMutex
	ttl time.Duration
	// epoch counts invalidations. A lookup in the store that started
	// before one may have read what it removed, so its result is not
	// cached.
	epoch     uint64
	cur, prev map[[32]byte]cachedAuth
	rotated   time.Time
}

type cachedAuth struct {
	user  User
	key   *APIKey // nil for an access token; never changed once cached
	until time.Time
}

// set turns the cache on for ttl, or off (and empties it) for ttl ≤ 0.
func (c *authCache) set(ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.ttl = max(ttl, 0)
	c.cur, c.prev = nil, nil
}

// get returns what hash authenticates at now, if it is cached, and the
// epoch to pass to put after a store lookup. The user is a copy; the key
// is shared, and read only.
func (c *authCache) get(hash [32]byte, now time.Time) (Credential, bool, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.ttl == 0 {
		return Credential{}, false, c.epoch
	}
	for _, m := range [2]map[[32]byte]cachedAuth{c.cur, c.prev} {
		if e, ok := m[hash]; ok && now.Before(e.until) {
			u := e.user
			return Credential{User: &u, Key: e.key}, true, c.epoch
		}
	}
	return Credential{}, false, c.epoch
}

// put caches cr for hash until the earlier of now+TTL and the token's
// expiry, unless an invalidation came since epoch.
func (c *authCache) put(hash [32]byte, cr Credential, now, expires time.Time, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ttl == 0 || c.epoch != epoch {
		return
	}
	if c.cur == nil || now.Sub(c.rotated) >= c.ttl || now.Before(c.rotated) {
		c.prev, c.cur, c.rotated = c.cur, make(map[[32]byte]cachedAuth), now
	}
	until := now.Add(c.ttl)
	if expires.Before(until) {
		until = expires
	}
	var key *APIKey
	if cr.Key != nil {
		k := *cr.Key
		key = &k
	}
	c.cur[hash] = cachedAuth{user: *cr.User, key: key, until: until}
}

// invalidate drops the entries inv names.
func (c *authCache) invalidate(inv Invalidation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if inv.All {
		c.cur, c.prev = nil, nil
		return
	}
	for _, m := range [2]map[[32]byte]cachedAuth{c.cur, c.prev} {
		if len(inv.TokenHash) == len([32]byte{}) {
			delete(m, [32]byte(inv.TokenHash))
		}
		if inv.UserID != 0 {
			// A scan: users change their profile or roles rarely, and
			// this keeps the hot path to one map.
			for h, e := range m {
				if e.user.ID == inv.UserID {
					delete(m, h)
				}
			}
		}
	}
}
