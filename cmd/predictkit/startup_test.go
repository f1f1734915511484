package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"help"}} {
		t.Run("predictkit "+args[0]+" lists every subcommand and exits 0", func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), args, &out, &out); code != 0 {
				t.Fatalf("exit %d:\n%s", code, out.String())
			}
			for _, cmd := range []string{"serve", "migrate", "bench", "admin", "version", "help"} {
				if !strings.Contains(out.String(), "\n  "+cmd+" ") {
					t.Errorf("%s is not listed:\n%s", cmd, out.String())
				}
			}
		})
	}
}

// A server whose database does not answer says so in one line, naming the
// host and port and the cause, with no source paths, and exits 1.
func TestStartupFailureIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	addr := memoryServer(t)
	t.Setenv("PREDICTKIT_DATABASE_URL", "postgres://postgres@"+closed+"/none?sslmode=disable&connect_timeout=2")
	t.Setenv("PREDICTKIT_START_TIMEOUT", "10s")
	var out bytes.Buffer
	code := run(context.Background(), []string{"-addr", addr}, &out, &out)
	t.Run("the server exits non-zero", func(t *testing.T) {
		if code == 0 {
			t.Errorf("exit 0:\n%s", out.String())
		}
	})
	text := strings.TrimSpace(out.String())
	t.Run("it prints one line naming host:port and the cause", func(t *testing.T) {
		if strings.Count(text, "\n") != 0 {
			t.Errorf("more than one line:\n%s", text)
		}
		want := "cannot connect to PostgreSQL at " + closed + ": connection refused"
		if !strings.Contains(text, want) {
			t.Errorf("the output does not say %q:\n%s", want, text)
		}
	})
	t.Run("it names no source file", func(t *testing.T) {
		if strings.Contains(text, ".go:") || strings.Contains(text, "/predictkit/") {
			t.Errorf("source paths in:\n%s", text)
		}
	})
}

// A PREDICTKIT_ variable that is no setting is warned about once, with
// the setting it probably meant.
func TestUnknownVariableIsWarnedAbout(t *testing.T) {
	addr := memoryServer(t)
	t.Setenv("PREDICTKIT_TRADE_BATCHSIZE", "10")
	t.Setenv("PREDICTKIT_TEST_DATABASE_URL", "postgres://elsewhere/x")
	t.Setenv("PREDICTKIT_REQUIRE_POSTGRES", "0")
	t.Setenv("PREDICTKIT_MODEL_SEEDS", "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if code := run(ctx, []string{"-addr", addr}, &out, &out); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	t.Run("the unknown variable is named once, with the close setting", func(t *testing.T) {
		if n := strings.Count(out.String(), "PREDICTKIT_TRADE_BATCHSIZE"); n != 1 {
			t.Errorf("named %d times:\n%s", n, out.String())
		}
		if !strings.Contains(out.String(), "did you mean PREDICTKIT_TRADE_BATCH_SIZE?") {
			t.Errorf("no suggestion:\n%s", out.String())
		}
	})
	t.Run("variables the project reads on purpose are not warned about", func(t *testing.T) {
		for _, v := range []string{"PREDICTKIT_TEST_DATABASE_URL", "PREDICTKIT_REQUIRE_POSTGRES", "PREDICTKIT_MODEL_SEEDS"} {
			if strings.Contains(out.String(), v) {
				t.Errorf("%s is warned about:\n%s", v, out.String())
			}
		}
	})
}
