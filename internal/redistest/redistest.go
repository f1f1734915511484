// Package redistest gives tests the Redis named by
// PREDICTKIT_TEST_REDIS_URL (.ci/run starts one on 127.0.0.1:6379), and
// keys of their own in it.
package redistest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvURL names the Redis the tests use (redis://127.0.0.1:6379/0);
// EnvRequire=1 makes its absence a failure rather than a skip.
const (
	EnvURL     = "PREDICTKIT_TEST_REDIS_URL"
	EnvRequire = "PREDICTKIT_REQUIRE_REDIS"
)

// URL returns the test Redis's URL after checking that it answers. It
// skips t when none is configured or it does not answer, unless
// EnvRequire is 1, which makes that a failure.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	missing := func(why string) {
		t.Helper()
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s", EnvRequire, why)
		}
		t.Skip(why)
	}
	if url == "" {
		missing(EnvURL + " is not set (a Redis server, e.g. redis://127.0.0.1:6379/0)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		missing(fmt.Sprintf("the Redis at %s does not answer: %v", opt.Addr, err))
	}
	return url
}

// Prefix returns a key prefix no other test run uses, and deletes every
// key under it (with redis_rate's "rate:" in front too) when t ends.
func Prefix(t testing.TB, url string) string {
	t.Helper()
	prefix := fmt.Sprintf("predictkit-test:%d:%d:", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { Clean(t, url, prefix, "rate:"+prefix) })
	return prefix
}

// Clean deletes the keys that start with any of prefixes.
func Clean(t testing.TB, url string, prefixes ...string) {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Errorf("%s: %v", EnvURL, err)
		return
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range prefixes {
		iter := c.Scan(ctx, 0, p+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scan %s*: %v", p, err)
			continue
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Errorf("delete %d keys of %s: %v", len(keys), p, err)
			}
		}
	}
}
