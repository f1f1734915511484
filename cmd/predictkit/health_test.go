package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// startServer runs `predictkit serve` on the memory store at a free
// address until the returned stop is called, and waits until it answers.
func startServer(t *testing.T) (addr string, stop func()) {
	t.Helper()
	addr = memoryServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out bytes.Buffer
	go func() { done <- run(ctx, []string{"-addr", addr}, &out, &out) }()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			return addr, stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve did not answer: %v\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestHealthCommand(t *testing.T) {
	addr, stop := startServer(t)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	// Answers a real server cannot be made to give on the memory store.
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"database_unavailable"}`))
	}))
	defer unavailable.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer silent.Close()

	type testCase struct {
		name   string
		args   []string
		env    string // PREDICTKIT_ADDR
		code   int
		stdout string
		stderr string
	}
	check := func(t *testing.T, c testCase) {
		t.Helper()
		t.Setenv("PREDICTKIT_ADDR", c.env)
		var out, errs bytes.Buffer
		code := run(context.Background(), append([]string{"health"}, c.args...), &out, &errs)
		if code != c.code {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out.String(), errs.String())
		}
		if !strings.Contains(out.String(), c.stdout) {
			t.Errorf("stdout %q does not say %q", out.String(), c.stdout)
		}
		if !strings.Contains(errs.String(), c.stderr) {
			t.Errorf("stderr %q does not say %q", errs.String(), c.stderr)
		}
		if c.code == 1 && strings.Count(errs.String(), "\n") != 1 {
			t.Errorf("a failed check is not one line: %q", errs.String())
		}
	}

	for _, c := range []testCase{
		{"a ready server exits 0 and prints its status", []string{"-url", "http://" + addr + "/readyz"}, "", 0, "200 OK", ""},
		{"without -url it asks the port of PREDICTKIT_ADDR", nil, addr, 0, "http://" + addr + "/readyz: 200 OK", ""},
		{"an answer other than 200 exits 1 naming the status", []string{"-url", "http://" + addr + "/api/v1/nope"}, "", 1, "", "answered 404 not_found"},
		{"a 503 exits 1 naming the server's error code", []string{"-url", unavailable.URL + "/readyz"}, "", 1, "", "answered 503 database_unavailable"},
		{"a server that does not answer in time exits 1", []string{"-url", silent.URL + "/readyz", "-timeout", "100ms"}, "", 1, "", "no answer within 100ms"},
		{"an unknown flag exits 2", []string{"-nope"}, "", 2, "", "-nope"},
		{"a stray argument exits 2", []string{"extra"}, "", 2, "", "unexpected arguments"},
		{"a URL that is not http exits 2", []string{"-url", "ftp://x/readyz"}, "", 2, "", "must be an http:// or https:// URL"},
		{"a timeout of zero exits 2", []string{"-timeout", "0s"}, "", 2, "", "must be positive"},
		{"a listen address without a port exits 2 unless -url is given", nil, "nonsense", 2, "", "gives no port"},
		{"-h prints the usage and exits 0", []string{"-h"}, "", 0, "", "Usage: predictkit health"},
	} {
		t.Run(c.name, func(t *testing.T) { check(t, c) })
	}

	stop()
	stopped = true
	t.Run("a stopped server exits 1 with one line saying why", func(t *testing.T) {
		check(t, testCase{args: []string{"-url", "http://" + addr + "/readyz"}, code: 1, stderr: "connection refused"})
	})
}

func TestDefaultHealthURL(t *testing.T) {
	cases := []struct {
		name, addr, want string
	}{
		{"unset asks the default port on the loopback address", "", "http://127.0.0.1:8080/readyz"},
		{"all interfaces asks the loopback address", ":9000", "http://127.0.0.1:9000/readyz"},
		{"0.0.0.0 asks the loopback address", "0.0.0.0:9000", "http://127.0.0.1:9000/readyz"},
		{"all IPv6 interfaces ask the IPv6 loopback address", "[::]:9000", "http://[::1]:9000/readyz"},
		{"a specific host is asked there", "10.1.2.3:9000", "http://10.1.2.3:9000/readyz"},
		{"a host name is kept", "localhost:9000", "http://localhost:9000/readyz"},
		{"any free port gives nothing to ask", ":0", ""},
		{"an address without a port gives nothing to ask", "8080", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := defaultHealthURL(func(k string) (string, bool) {
				if k == "PREDICTKIT_ADDR" && c.addr != "" {
					return c.addr, true
				}
				return "", false
			})
			if c.want == "" {
				if err == nil {
					t.Fatalf("%q gave %q, want an error", c.addr, got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("%q gave %q, %v; want %q", c.addr, got, err, c.want)
			}
		})
	}
}
