package postgres

import (
	"errors"
	"sync"

	"github.com/predictkit/predictkit/account"
)

// accountIDs remembers the ids of ledger accounts seen in committed
// transactions, so that a trade whose accounts are all known locks them
// by primary key in one statement, instead of creating the missing ones
// and then finding every one by (kind, owner) in two. The ids stay right:
// an account's id never changes, and a committed account is never
// deleted (the only deletion is of the accounts of a sub-account made
// and dropped by one transaction, which are never remembered).
type accountIDs struct {
	mu  sync.RWMutex
	ids map[account.Ref]int64
}

// maxCachedAccounts bounds the cache (about 100 bytes an entry); when it
// is full it starts again empty.
const maxCachedAccounts = 1 << 20

// lookup returns the ids of refs, or ok false if any is unknown.
func (c *accountIDs) lookup(refs []account.Ref) (ids []int64, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ids = make([]int64, len(refs))
	for i, r := range refs {
		if ids[i], ok = c.ids[r]; !ok {
			return nil, false
		}
	}
	return ids, true
}

// remember adds the ids of a committed transaction's accounts, except
// those of owners dropped by it.
func (c *accountIDs) remember(ids map[account.Ref]int64, dropped []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil || len(c.ids)+len(ids) > maxCachedAccounts {
		c.ids = make(map[account.Ref]int64, len(ids))
	}
next:
	for r, id := range ids {
		if r.Kind == account.KindUser || r.Kind == account.KindUserBonus {
			for _, d := range dropped {
				if r.Owner == d {
					continue next
				}
			}
		}
		c.ids[r] = id
	}
}

// forget empties the cache: a lock by id found rows other than it
// expected (a database restored under a running server, say).
func (c *accountIDs) forget() {
	c.mu.Lock()
	c.ids = nil
	c.mu.Unlock()
}

// errStaleAccountIDs makes the attempt run again on the slow path.
var errStaleAccountIDs = errors.New("postgres: cached ledger account ids do not match the database")
