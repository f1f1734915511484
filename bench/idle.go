package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// ServerMemory is a reading of the server's /metrics (the Go runtime's
// and the process's collectors).
type ServerMemory struct {
	HeapInuse  float64 `json:"heap_inuse_bytes"`  // go_memstats_heap_inuse_bytes
	StackInuse float64 `json:"stack_inuse_bytes"` // go_memstats_stack_inuse_bytes
	Goroutines float64 `json:"goroutines"`        // go_goroutines
	RSS        float64 `json:"rss_bytes"`         // process_resident_memory_bytes
	CPU        float64 `json:"cpu_seconds"`       // process_cpu_seconds_total
	// GCCycles counts the collections the bench's scrapes drove before
	// this reading (go_gc_duration_seconds_count's growth); fewer than
	// gcCycles means the reading may include garbage.
	GCCycles int `json:"gc_cycles"`
}

// The metrics ServerMemory reads, and its GC count.
var memoryMetrics = map[string]func(m *ServerMemory, v float64){
	"go_memstats_heap_inuse_bytes":  func(m *ServerMemory, v float64) { m.HeapInuse = v },
	"go_memstats_stack_inuse_bytes": func(m *ServerMemory, v float64) { m.StackInuse = v },
	"go_goroutines":                 func(m *ServerMemory, v float64) { m.Goroutines = v },
	"process_resident_memory_bytes": func(m *ServerMemory, v float64) { m.RSS = v },
	"process_cpu_seconds_total":     func(m *ServerMemory, v float64) { m.CPU = v },
}

const gcCountMetric = "go_gc_duration_seconds_count"

const (
	// gcCycles is how many collections the bench drives before reading
	// the server's memory: the second runs entirely after the state to
	// measure was in place.
	gcCycles = 2
	// gcDriveLimit bounds the driving.
	gcDriveLimit = 60 * time.Second
	// gcDriveClients scrape at once while driving.
	gcDriveClients = 4
	// sweepPause lets the collector's background sweep free the spans
	// of the garbage it found before the reading.
	sweepPause = 300 * time.Millisecond
)

// scrapeMemory reads the server's /metrics once. It returns the memory
// figures and the GC count.
func (a *api) scrapeMemory(ctx context.Context) (ServerMemory, int64, error) {
	status, body, _, err := a.send(ctx, request{method: http.MethodGet, path: "/metrics"})
	switch {
	case err != nil:
		return ServerMemory{}, 0, fmt.Errorf("GET /metrics: %w", err)
	case status != http.StatusOK:
		return ServerMemory{}, 0, fmt.Errorf("GET /metrics: %d: the idle mode reads the server's memory from its Prometheus metrics", status)
	}
	return parseMemory(body)
}

// parseMemory reads ServerMemory's figures and the GC count from a
// Prometheus text exposition; each is a sample without labels.
func parseMemory(body []byte) (ServerMemory, int64, error) {
	var m ServerMemory
	var gc int64 = -1
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			continue
		}
		set, mem := memoryMetrics[string(name)]
		if !mem && string(name) != gcCountMetric {
			continue
		}
		v, err := strconv.ParseFloat(string(bytes.Fields(value)[0]), 64)
		if err != nil {
			return m, 0, fmt.Errorf("metric %s: %w", name, err)
		}
		if mem {
			set(&m, v)
			found++
		} else {
			gc = int64(v)
		}
	}
	if err := sc.Err(); err != nil {
		return m, 0, err
	}
	if found < len(memoryMetrics) || gc < 0 {
		return m, 0, fmt.Errorf("GET /metrics lacks one of go_memstats_heap_inuse_bytes, go_memstats_stack_inuse_bytes, go_goroutines, process_resident_memory_bytes, process_cpu_seconds_total, %s", gcCountMetric)
	}
	return m, gc, nil
}

// settledMemory reads the server's memory after making it collect its
// garbage. The server offers no way to force a collection, so the bench
// drives it: it scrapes /metrics, whose answer costs the server some
// hundred kilobytes of garbage each, until gcCycles collections have run,
// then waits for the sweep and reads. What the last collection found live
// is then in use, with at most the garbage of the few scrapes after it.
func settledMemory(ctx context.Context, a *api) (ServerMemory, error) {
	_, gc0, err := a.scrapeMemory(ctx)
	if err != nil {
		return ServerMemory{}, err
	}
	dctx, cancel := context.WithTimeout(ctx, gcDriveLimit)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var first error
	reached := int64(0)
	for range gcDriveClients {
		wg.Go(func() {
			for dctx.Err() == nil {
				_, gc, err := a.scrapeMemory(dctx)
				mu.Lock()
				if err != nil && first == nil && dctx.Err() == nil {
					first = err
				}
				reached = max(reached, gc-gc0)
				done := reached >= gcCycles || first != nil
				mu.Unlock()
				if done {
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return ServerMemory{}, first
	}
	sleep(ctx, sweepPause)
	if err := ctx.Err(); err != nil {
		return ServerMemory{}, err
	}
	m, gc, err := a.scrapeMemory(ctx)
	m.GCCycles = int(gc - gc0)
	return m, err
}

// benchMemory returns the bench's own Go heap and stacks in use after a
// collection.
func benchMemory() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse + m.StackInuse)
}

// runIdle opens cfg.Subscribers idle connections to the market's stream,
// holds them for cfg.Duration, and reports the server's memory per
// connection.
func runIdle(ctx context.Context, a *api, cfg Config, fx *fixture, target *streamTarget, progress io.Writer) (*IdleReport, error) {
	ir := &IdleReport{Connections: cfg.Subscribers}
	fmt.Fprintln(progress, "bench: reading the server's memory before (driving its GC with /metrics scrapes)")
	before, err := settledMemory(ctx, a)
	if err != nil {
		return nil, err
	}
	ir.Before = before
	mine := benchMemory()

	run := newStreamRun(fx.markets[0], newAnswerBook())
	run.noLatency = true
	fmt.Fprintf(progress, "bench: opening %d idle connections to %s\n", cfg.Subscribers, target.path)
	ss := open(ctx, target, cfg.Subscribers, 0, cfg.Timeout, run)
	defer ss.close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ir.Connected, ir.ConnectLatency, ir.Opening, ir.ConnectSample = ss.connected, latencyOf(ss.connect), ss.opening, ss.sample
	if len(ss.errs) > 0 {
		ir.ConnectErrors = ss.errs
	}
	if ss.connected > 0 {
		ir.BenchPerConnection = (benchMemory() - mine) / float64(ss.connected)
	}
	fmt.Fprintf(progress, "bench: %d of %d connected in %v; holding them for %v\n", ss.connected, cfg.Subscribers, ss.opening.Round(time.Millisecond), cfg.Duration)
	held := time.Now()
	sleep(ctx, cfg.Duration)
	fmt.Fprintln(progress, "bench: reading the server's memory with the connections open")
	after, err := settledMemory(ctx, a)
	if err != nil {
		return nil, err
	}
	ir.Held = time.Since(held)
	ir.After = after
	ss.close()
	for _, s := range ss.subs {
		ir.Messages += s.t.messages
		ir.Comments += s.comments
	}
	if n := float64(ss.connected); n > 0 {
		ir.HeapPerConnection = (after.HeapInuse - before.HeapInuse) / n
		ir.StackPerConnection = (after.StackInuse - before.StackInuse) / n
		ir.GoMemoryPerConnection = ir.HeapPerConnection + ir.StackPerConnection
		ir.GoroutinesPerConnection = (after.Goroutines - before.Goroutines) / n
		ir.RSSPerConnection = (after.RSS - before.RSS) / n
	}
	return ir, nil
}
