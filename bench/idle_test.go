package bench

import (
	"strings"
	"testing"
)

func TestParseMemoryReadsTheRuntimeMetrics(t *testing.T) {
	const exposition = `# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.1e-05
go_gc_duration_seconds_sum 0.0012
go_gc_duration_seconds_count 13
# TYPE go_goroutines gauge
go_goroutines 10011
go_memstats_heap_inuse_bytes 1.5728640e+08
go_memstats_heap_inuse_bytes_extra 1
go_memstats_stack_inuse_bytes 8.2e+07
process_resident_memory_bytes 2.9e+08
process_cpu_seconds_total 12.5
predictkit_http_requests_in_flight 1
`
	cases := []struct {
		name  string
		body  string
		want  ServerMemory
		gc    int64
		fails string
	}{
		{"every figure of a server's scrape", exposition, ServerMemory{HeapInuse: 157286400, StackInuse: 82e6, Goroutines: 10011, RSS: 29e7, CPU: 12.5}, 13, ""},
		{"a scrape without the Go collector is refused", "predictkit_http_requests_in_flight 1\n", ServerMemory{}, 0, "lacks"},
		{"a value that is not a number is refused", strings.Replace(exposition, "go_goroutines 10011", "go_goroutines many", 1), ServerMemory{}, 0, "go_goroutines"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, gc, err := parseMemory([]byte(c.body))
			if c.fails != "" {
				if err == nil || !strings.Contains(err.Error(), c.fails) {
					t.Fatalf("error %v, want one saying %q", err, c.fails)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m != c.want || gc != c.gc {
				t.Errorf("parseMemory = %+v, %d; want %+v, %d", m, gc, c.want, c.gc)
			}
		})
	}
}
