package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

const healthUsage = `Usage: predictkit health [-url URL] [-timeout DURATION]

Asks a running server whether it is ready (GET /readyz) and exits 0 when
it answers 200, 1 when it answers anything else or cannot be reached
(saying why in one line on stderr), 2 for a usage error. It needs no
shell, curl or wget: a container's HEALTHCHECK, a Kubernetes exec probe
or a script can run it.

The default URL is /readyz on this machine at the port of
PREDICTKIT_ADDR (the server's listen address, default :8080), so it
follows the server's setting.

Flags:
`

// healthCmd is `predictkit health`.
func healthCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseHealthArgs(args, os.LookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	status, err := checkHealth(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "predictkit health: %s\n", oneLine(err.Error()))
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", opts.url, status)
	return 0
}

// healthOptions are the parsed flags of predictkit health.
type healthOptions struct {
	url     string
	timeout time.Duration
}

// parseHealthArgs parses the flags of predictkit health; lookup reads
// PREDICTKIT_ADDR for the default URL. Problems and -h go to stderr.
func parseHealthArgs(args []string, lookup func(string) (string, bool), stderr io.Writer) (healthOptions, error) {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def, defErr := defaultHealthURL(lookup)
	rawURL := fs.String("url", def, "the readiness URL to ask")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), healthUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return healthOptions{}, err
	}
	fail := func(format string, a ...any) (healthOptions, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintf(stderr, "predictkit health: %v\n", err)
		return healthOptions{}, err
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["url"] && defErr != nil {
		return fail("%v (or give -url)", defErr)
	}
	u, err := url.Parse(*rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail("-url %q: must be an http:// or https:// URL with a host", *rawURL)
	}
	if *timeout <= 0 {
		return fail("-timeout %v: must be positive", *timeout)
	}
	return healthOptions{url: *rawURL, timeout: *timeout}, nil
}

// defaultHealthURL is /readyz on the loopback address at the port of
// PREDICTKIT_ADDR, or at its host when that is a specific one: a server
// listening on all interfaces (":8080", "0.0.0.0:8080", "[::]:8080")
// answers on the loopback address too.
func defaultHealthURL(lookup func(string) (string, bool)) (string, error) {
	addr := ":8080"
	if v, ok := lookup("PREDICTKIT_ADDR"); ok && strings.TrimSpace(v) != "" {
		addr = strings.TrimSpace(v)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return "", fmt.Errorf("PREDICTKIT_ADDR %q gives no port to ask", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}

// checkHealth asks opts.url once and returns its status line when it is
// 200, else an error naming the URL and the reason: the status with the
// server's error code, or why no answer came.
func checkHealth(ctx context.Context, opts healthOptions) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, opts.url, nil)
	if err != nil {
		return "", err
	}
	client := &http.Client{
		// A probe asks the server itself: no proxy from the environment,
		// no redirect to somewhere else.
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	res, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("%s: no answer within %v", opts.url, opts.timeout)
		}
		return "", fmt.Errorf("%s: %v", opts.url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode == http.StatusOK {
		return res.Status, nil
	}
	// The server's error code says more than its status text.
	reason := strings.TrimSpace(strings.TrimPrefix(res.Status, fmt.Sprint(res.StatusCode)))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		reason = e.Error
	}
	return "", fmt.Errorf("%s answered %d %s", opts.url, res.StatusCode, reason)
}
