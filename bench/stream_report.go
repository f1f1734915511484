package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// writeText writes the stream's part of the text report.
func (s *StreamReport) writeText(b *strings.Builder) error {
	switch {
	case s.Delivery != nil:
		return s.Delivery.writeText(b)
	case s.Sweep != nil:
		return s.Sweep.writeText(b)
	case s.Idle != nil:
		return s.Idle.writeText(b)
	}
	return nil
}

func (d *DeliveryReport) writeText(b *strings.Builder) error {
	fmt.Fprintf(b, "stream: %d of %d subscribers connected (answer p50 %s ms, p99 %s ms), each resuming after id %d\n",
		d.Connected, d.Subscribers, ms(d.ConnectLatency.P50), ms(d.ConnectLatency.P99), d.ResumedFrom)
	if len(d.ConnectErrors) > 0 {
		fmt.Fprintf(b, "stream: connect errors %s, first: %s\n", counts2text(d.ConnectErrors), d.ConnectSample)
		tooMany(b, d.ConnectErrors)
	}
	fmt.Fprintf(b, "stream: %d trades answered, %d without an answer; %d deliveries owed, %d made\n",
		d.Trades, d.UnknownTrades, d.Expected, d.Delivered)
	fmt.Fprintf(b, "stream: gaps %d (%d subscribers), duplicates %d, out of order %d, missing ids %d, unexpected %d, foreign %d, resets %d, reconnects %d\n",
		d.Gaps, d.SubscribersWithGaps, d.Duplicates, d.OutOfOrder, d.MissingIDs, d.Unexpected, d.Foreign, d.Resets, d.Reconnects)
	if len(d.ReconnectErrors) > 0 {
		fmt.Fprintf(b, "stream: failed reconnections %s\n", counts2text(d.ReconnectErrors))
	}
	fmt.Fprintf(b, "stream: %.0f deliveries/s in the measured window (%d trade messages); %d messages in all, %d comment lines (opening, pings)\n",
		d.DeliveriesPerSecond, d.Deliveries, d.Messages, d.Comments)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "delivery latency    \tdeliveries\tmean ms\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	for _, row := range []struct {
		name string
		l    Latency
	}{{"from the answer     ", d.Latency}, {"from created_at     ", d.LatencyFromCreatedAt}} {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, d.Timed, ms(row.l.Mean), ms(row.l.P50), ms(row.l.P95), ms(row.l.P99), ms(row.l.P999), ms(row.l.Max))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("  (" + latencyFrom + ")\n")
	if d.ServerCPU > 0 {
		fmt.Fprintf(b, "stream: the server's CPU from the trading's start to the drain's end: %.2f s, %.1f µs a message delivered (trades, prices; the trades' own cost included)\n",
			d.ServerCPU, 1e6*d.ServerCPUPerMessage)
	}
	drained := "every subscriber had every trade"
	if d.DrainTimedOut {
		drained = "the drain limit came first"
	}
	fmt.Fprintf(b, "stream: %s %s ms after the trading ended\n", drained, ms(d.Drain))
	for _, p := range d.Problems {
		fmt.Fprintf(b, "  problem: %s\n", p)
	}
	return nil
}

func (w *SweepReport) writeText(b *strings.Builder) error {
	fmt.Fprintf(b, "sweep: raising the %s ×%g a step until the delivery latency's p99 passes %s ms\n", w.Raise, w.Factor, ms(w.P99))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "trades/s asked\tsubscribers\ttrades/s\tunsent\tdeliveries/s\tp50 ms\tp99 ms\tmax ms\tgaps\tdup/order\tserver µs/msg\twithin\t")
	for _, st := range w.Steps {
		d := st.Delivery
		within := "no"
		if st.Within {
			within = "yes"
		}
		fmt.Fprintf(tw, "%g\t%d\t%.1f\t%d\t%.0f\t%s\t%s\t%s\t%d\t%d\t%.1f\t%s\t\n", st.Rate, st.Subscribers, st.TradesPerSecond, st.Unsent,
			d.DeliveriesPerSecond, ms(d.Latency.P50), ms(d.Latency.P99), ms(d.Latency.Max), d.Gaps, d.Duplicates+d.OutOfOrder, 1e6*d.ServerCPUPerMessage, within)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if w.Best >= 0 {
		st := w.Steps[w.Best]
		fmt.Fprintf(b, "sweep: best within the limit: %.0f deliveries/s (%g trades/s × %d subscribers, p99 %s ms)\n",
			st.Delivery.DeliveriesPerSecond, st.Rate, st.Subscribers, ms(st.Delivery.Latency.P99))
	} else {
		b.WriteString("sweep: no step stayed within the limit: start lower\n")
	}
	fmt.Fprintf(b, "sweep: stopped: %s\n", w.Stopped)
	b.WriteString("  (" + latencyFrom + ")\n")
	for _, st := range w.Steps {
		for _, p := range st.Delivery.Problems {
			fmt.Fprintf(b, "  problem (%g/s × %d): %s\n", st.Rate, st.Subscribers, p)
		}
	}
	return nil
}

func (ir *IdleReport) writeText(b *strings.Builder) error {
	fmt.Fprintf(b, "idle: %d of %d connections open in %v (answer p50 %s ms, p99 %s ms), held %v; %d messages, %d comment lines (opening, pings) received\n",
		ir.Connected, ir.Connections, ir.Opening.Round(time.Millisecond), ms(ir.ConnectLatency.P50), ms(ir.ConnectLatency.P99),
		ir.Held.Round(time.Millisecond), ir.Messages, ir.Comments)
	if len(ir.ConnectErrors) > 0 {
		fmt.Fprintf(b, "idle: connect errors %s, first: %s\n", counts2text(ir.ConnectErrors), ir.ConnectSample)
		tooMany(b, ir.ConnectErrors)
	}
	fmt.Fprintf(b, "idle: the server's /metrics, each read after %d and %d collections the bench drove with scrapes (the server has no way to force one):\n",
		ir.Before.GCCycles, ir.After.GCCycles)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "                     \tbefore\twith the connections\tper connection\t")
	rows := []struct {
		name                string
		before, after, each float64
		bytes               bool
	}{
		{"Go heap in use       ", ir.Before.HeapInuse, ir.After.HeapInuse, ir.HeapPerConnection, true},
		{"goroutine stacks     ", ir.Before.StackInuse, ir.After.StackInuse, ir.StackPerConnection, true},
		{"Go heap and stacks   ", ir.Before.HeapInuse + ir.Before.StackInuse, ir.After.HeapInuse + ir.After.StackInuse, ir.GoMemoryPerConnection, true},
		{"goroutines           ", ir.Before.Goroutines, ir.After.Goroutines, ir.GoroutinesPerConnection, false},
		{"resident memory      ", ir.Before.RSS, ir.After.RSS, ir.RSSPerConnection, true},
	}
	for _, r := range rows {
		if r.bytes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r.name, mib(r.before), mib(r.after), kib(r.each))
		} else {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t\n", r.name, r.before, r.after, r.each)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(b, "idle: the bench's own Go heap and stacks: %s a connection\n", kib(ir.BenchPerConnection))
	return nil
}

// tooMany explains 429 answers to the stream: the server's connection
// limits, which a benchmark from one address passes at once.
func tooMany(b *strings.Builder, errs map[string]int64) {
	if errs["429"] > 0 {
		b.WriteString("  (429: the server's stream limits; serve the benchmark with PREDICTKIT_STREAM_MAX_PER_ADDRESS and PREDICTKIT_STREAM_MAX_CONNECTIONS above -subscribers)\n")
	}
}

func mib(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
func kib(v float64) string { return fmt.Sprintf("%.1f KiB", v/(1<<10)) }

// counts2text writes {"409": 2, "transport": 1} as "409 × 2, transport × 1".
func counts2text(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s × %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
