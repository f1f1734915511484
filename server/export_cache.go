package server

import (
	"container/list"
	"sync"
)

// exportCache keeps the trades files of resolved markets, whose trades
// never change, most recently used first, within a total of max bytes:
// the least recently used files go first when a new one would not fit.
// A file larger than a quarter of max is never kept, so that one huge
// market cannot push out every other.
type exportCache struct {
	max int64

	mu    sync.Mutex
	size  int64
	order *list.List              // of *exportFile, most recently used first
	items map[int64]*list.Element // by market id
}

// exportFile is one market's rendered trades file with its strong ETag.
type exportFile struct {
	market int64
	etag   string
	body   []byte
}

func newExportCache(maxBytes int64) *exportCache {
	return &exportCache{max: maxBytes, order: list.New(), items: map[int64]*list.Element{}}
}

// maxFile is the largest file the cache keeps.
func (ec *exportCache) maxFile() int64 { return ec.max / 4 }

// get returns market's file, or nil when it is not kept.
func (ec *exportCache) get(market int64) *exportFile {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	el, ok := ec.items[market]
	if !ok {
		return nil
	}
	ec.order.MoveToFront(el)
	return el.Value.(*exportFile)
}

// put keeps f, unless it is larger than maxFile.
func (ec *exportCache) put(f *exportFile) {
	n := int64(len(f.body))
	if n > ec.maxFile() {
		return
	}
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if el, ok := ec.items[f.market]; ok {
		ec.size -= int64(len(el.Value.(*exportFile).body))
		ec.order.Remove(el)
	}
	ec.items[f.market] = ec.order.PushFront(f)
	ec.size += n
	for ec.size > ec.max {
		last := ec.order.Back()
		old := last.Value.(*exportFile)
		ec.order.Remove(last)
		delete(ec.items, old.market)
		ec.size -= int64(len(old.body))
	}
}

// bytes returns the total size of the files kept.
func (ec *exportCache) bytes() int64 {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	return ec.size
}
