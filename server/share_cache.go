package server

import (
	"container/list"
	"strconv"
	"sync"

	"golang.org/x/sync/singleflight"
)

// shareCardCacheSize is how many events' cards the server keeps: a card
// is some 20–60 KB, so a few hundred are a few MB at most.
const shareCardCacheSize = 256

// cardCache keeps the latest card image of the events shared most
// recently, each under the version of the card it draws
// (shareCard.Version): a trade that changes what the card shows makes a
// new one. Concurrent requests for a card not yet drawn draw it once: a
// link posted in a busy chat brings every preview bot at the same
// moment.
type cardCache struct {
	max int

	mu    sync.Mutex
	order *list.List              // of *cardEntry, most recently used first
	items map[int64]*list.Element // by event id: one version per event

	renders singleflight.Group
	// drawn counts the renders, for the tests and the benchmark.
	drawn int64
}

type cardEntry struct {
	event   int64
	version string
	png     []byte
}

func newCardCache(size int) *cardCache {
	return &cardCache{max: size, order: list.New(), items: map[int64]*list.Element{}}
}

// get returns the image of version of event's card, drawing it with
// render when the cache does not have it.
func (cc *cardCache) get(event int64, version string, render func() ([]byte, error)) ([]byte, error) {
	if b, ok := cc.lookup(event, version); ok {
		return b, nil
	}
	key := strconv.FormatInt(event, 10) + "/" + version
	v, err, _ := cc.renders.Do(key, func() (any, error) {
		// A render that finished while this one waited for the lock.
		if b, ok := cc.lookup(event, version); ok {
			return b, nil
		}
		b, err := render()
		if err != nil {
			return nil, err
		}
		cc.store(event, version, b)
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func (cc *cardCache) lookup(event int64, version string) ([]byte, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	el, ok := cc.items[event]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cardEntry)
	if e.version != version {
		return nil, false
	}
	cc.order.MoveToFront(el)
	return e.png, true
}

func (cc *cardCache) store(event int64, version string, b []byte) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.drawn++
	if el, ok := cc.items[event]; ok {
		el.Value = &cardEntry{event: event, version: version, png: b}
		cc.order.MoveToFront(el)
		return
	}
	cc.items[event] = cc.order.PushFront(&cardEntry{event: event, version: version, png: b})
	for cc.order.Len() > cc.max {
		last := cc.order.Back()
		cc.order.Remove(last)
		delete(cc.items, last.Value.(*cardEntry).event)
	}
}

// rendered returns how many cards were drawn.
func (cc *cardCache) rendered() int64 {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.drawn
}
