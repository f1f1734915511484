package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := out.String()
	t.Run("the retry is a replay of the bet", func(t *testing.T) {
		bet := regexp.MustCompile(`trade (\d+)\)`).FindStringSubmatch(s)
		retry := regexp.MustCompile(`replayed=true, same trade (\d+)`).FindStringSubmatch(s)
		if bet == nil || retry == nil || bet[1] != retry[1] {
			t.Fatalf("output:\n%s", s)
		}
	})
	t.Run("the sale's payout stays on the sub-account", func(t *testing.T) {
		payout := regexp.MustCompile(`for (\d+) kopecks, kept`).FindStringSubmatch(s)
		states := regexp.MustCompile(`state: exists=true balance=(\d+)`).FindAllStringSubmatch(s, -1)
		if payout == nil || len(states) != 2 || states[0][1] != "0" || states[1][1] != payout[1] {
			t.Fatalf("output:\n%s", s)
		}
		if n, _ := strconv.Atoi(payout[1]); n <= 0 {
			t.Fatalf("payout %d", n)
		}
	})
	t.Run("the ledger balances", func(t *testing.T) {
		if !regexp.MustCompile(`audit: ok=true, \d+ postings sum to 0`).MatchString(s) {
			t.Fatalf("output:\n%s", s)
		}
	})
}
