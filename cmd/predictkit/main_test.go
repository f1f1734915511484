package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

func TestServeHelpListsEverySetting(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &out); code != 0 {
		t.Fatalf("serve -h exited %d", code)
	}
	for _, want := range []string{
		"PREDICTKIT_ADDR", ":8080", "PREDICTKIT_DATABASE_URL", "PREDICTKIT_ADMIN_TOKEN", "PREDICTKIT_DEMO",
		"PREDICTKIT_MIGRATE_ON_START", "PREDICTKIT_READ_TIMEOUT", "PREDICTKIT_WRITE_TIMEOUT", "PREDICTKIT_IDLE_TIMEOUT",
		"PREDICTKIT_SHUTDOWN_TIMEOUT", "PREDICTKIT_BCRYPT_COST", "PREDICTKIT_TOKEN_TTL", "PREDICTKIT_LOG_LEVEL",
		"PREDICTKIT_LOG_FORMAT", "PREDICTKIT_COOKIE_SECURE", "PREDICTKIT_TRUSTED_PROXIES", "-addr", "-database-url",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve -h does not mention %s:\n%s", want, out.String())
		}
	}
}

func TestCommandLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
		says string
	}{
		{"an unknown command exits 2 with the usage", []string{"frobnicate"}, nil, 2, "unknown command"},
		{"help prints the commands", []string{"help"}, nil, 0, "migrate"},
		{"help lists the health command", []string{"-h"}, nil, 0, "health    exit 0 when a running server"},
		{"an unknown flag exits 2", []string{"serve", "-nope"}, nil, 2, "nope"},
		{"a stray argument exits 2", []string{"serve", "extra"}, nil, 2, "unexpected arguments"},
		{"a malformed environment variable exits 2 naming it", []string{"serve"}, map[string]string{"PREDICTKIT_BCRYPT_COST": "lots"}, 2, "PREDICTKIT_BCRYPT_COST"},
		{"a malformed duration exits 2 naming it", nil, map[string]string{"PREDICTKIT_READ_TIMEOUT": "soon"}, 2, "PREDICTKIT_READ_TIMEOUT"},
		{"a too short admin token exits 2", []string{"-admin-token", "short"}, nil, 2, "admin token"},
		{"migrate without a database URL exits 2", []string{"migrate"}, map[string]string{"PREDICTKIT_DATABASE_URL": ""}, 2, "no database URL"},
		{"migrate -h exits 0", []string{"migrate", "-h"}, nil, 0, "-database-url"},
		{"a busy address fails start-up with 1", []string{"-addr", "BUSY"}, nil, 1, "listen"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := c.args
			if len(args) == 2 && args[1] == "BUSY" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				args = []string{"-addr", ln.Addr().String(), "-log-level", "error"}
			}
			var out bytes.Buffer
			if code := run(context.Background(), args, &out, &out); code != c.code {
				t.Fatalf("exit %d, want %d; output:\n%s", code, c.code, out.String())
			}
			if !strings.Contains(out.String(), c.says) {
				t.Errorf("output does not say %q:\n%s", c.says, out.String())
			}
		})
	}
}

// TestServeRunsUntilCancelled starts the default command (in memory, demo
// data) and stops it the way a signal would.
// memoryServer readies the environment for serve on the memory store and
// returns a free address for it.
func memoryServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("PREDICTKIT_DATABASE_URL", "")
	t.Setenv("PREDICTKIT_LOG_LEVEL", "error")
	t.Setenv("PREDICTKIT_BCRYPT_COST", "4")
	return addr
}

func TestServeRunsUntilCancelled(t *testing.T) {
	addr := memoryServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-addr", addr}, &out, &out) }()

	var events string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get("http://" + addr + "/api/v1/events")
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(res.Body)
			res.Body.Close()
			events = b.String()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(events, "Demo Cup final") {
		t.Errorf("the default command serves no demo event: %q", events)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel; output:\n%s", code, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// An interrupt that arrives while the server is still starting stops it
// cleanly: exit 0, and the address is free again.
func TestServeStoppedWhileStartingExitsCleanly(t *testing.T) {
	addr := memoryServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if code := run(ctx, []string{"-addr", addr}, &out, &out); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, out.String())
	}
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address is still taken: %v", err)
	}
	again.Close()
}

func TestMigrate(t *testing.T) {
	url := pgtest.SchemaURL(t)
	for i := range 2 {
		t.Run(fmt.Sprintf("migrate run %d succeeds (it is idempotent)", i+1), func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), []string{"migrate", "-database-url", url}, &out, &out); code != 0 {
				t.Fatalf("exit %d: %s", code, out.String())
			}
		})
	}
	t.Run("migrate against an unreachable database exits 1", func(t *testing.T) {
		var out bytes.Buffer
		code := run(context.Background(), []string{"migrate", "-timeout", "3s", "-database-url", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"}, &out, &out)
		if code != 1 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
	})
}
