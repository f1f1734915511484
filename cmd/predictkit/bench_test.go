package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

func TestBenchCommandLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"bench -h lists the scenarios and exits 0", []string{"bench", "-h"}, 0, "partner"},
		{"bench -h lists the stream modes", []string{"bench", "-h"}, 0, "-stream-mode"},
		{"an unknown stream mode exits 2", []string{"bench", "-admin-token", "x", "-scenario", "stream", "-stream-mode", "loud"}, 2, `stream mode "loud"`},
		{"negative subscribers exit 2", []string{"bench", "-scenario", "stream", "-subscribers", "-1"}, 2, "-subscribers"},
		{"an unknown flag exits 2", []string{"bench", "-nope"}, 2, "nope"},
		{"a stray argument exits 2", []string{"bench", "extra"}, 2, "unexpected arguments"},
		{"an unknown scenario exits 2", []string{"bench", "-admin-token", "x", "-scenario", "cold"}, 2, `scenario "cold"`},
		{"no admin token exits 2", []string{"bench", "-admin-token", ""}, 2, "admin token"},
		{"zero clients exits 2", []string{"bench", "-clients", "0"}, 2, "-clients"},
		{"a server that does not answer fails the setup with 1", []string{"bench", "-admin-token", "x", "-url", "http://127.0.0.1:1"}, 1, "does not answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), c.args, &out, &out); code != c.code {
				t.Fatalf("exit %d, want %d:\n%s", code, c.code, out.String())
			}
			if !strings.Contains(out.String(), c.says) {
				t.Fatalf("output does not say %q:\n%s", c.says, out.String())
			}
		})
	}
}

func TestBenchRunsAgainstAServer(t *testing.T) {
	const token = "bench-cmd-admin-token"
	cfg := server.DefaultConfig()
	cfg.Demo = false
	cfg.AdminToken = token
	cfg.BcryptCost = 4
	cfg.Logger = slog.New(slog.DiscardHandler)
	app, err := server.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { _ = app.Shutdown() })

	var stdout, stderr bytes.Buffer
	args := []string{"bench", "-url", "http://" + ln.Addr().String(), "-admin-token", token,
		"-scenario", "hot", "-clients", "2", "-duration", "300ms", "-warmup", "0", "-json"}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var rep struct {
		Scenario string `json:"scenario"`
		Warmup   int64  `json:"warmup_ns"`
		Phases   []struct {
			Requests int64 `json:"requests"`
		} `json:"phases"`
		Audit struct {
			OK bool `json:"ok"`
		} `json:"audit"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("-json printed no JSON object: %v\n%s", err, stdout.String())
	}
	if rep.Scenario != "hot" || rep.Warmup != 0 || len(rep.Phases) != 1 || rep.Phases[0].Requests == 0 || !rep.Audit.OK {
		t.Fatalf("report %+v", rep)
	}
}
