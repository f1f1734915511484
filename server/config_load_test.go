package server_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// env is a fake environment for LoadConfig.
func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

func TestLoadConfigReportsEveryProblemAtOnce(t *testing.T) {
	badFAQ := filepath.Join(t.TempDir(), "faq.json")
	if err := os.WriteFile(badFAQ, []byte(`{"entries": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"PREDICTKIT_BCRYPT_COST":      "lots",
		"PREDICTKIT_LOG_LEVEL":        "loud",
		"PREDICTKIT_DEMO":             "maybe",
		"PREDICTKIT_TRADE_BATCH_SIZE": "0",
		"PREDICTKIT_AUDIT_INTERVAL":   "10ms",
		"PREDICTKIT_ADMIN_TOKEN":      "short-secret",
		"PREDICTKIT_DATABASE_URL":     "postgres://app:hunter2-password@db:notaport/x",
		"PREDICTKIT_CHAT_WEBHOOK_URL": "ftp://hooks.example/secret-path",
		"PREDICTKIT_CHAT_FAQ":         badFAQ,
		"PREDICTKIT_REDIS_URL":        "redis://:redis-secret-pw@cache:notaport/0",
		"PREDICTKIT_RATE_LOGIN":       "fast",
		"PREDICTKIT_CORS_ORIGINS":     "example.com",
		"PREDICTKIT_TRUSTED_PROXIES":  "10.0.0.300",
		"PREDICTKIT_READ_TIMEOUT":     "soon", // overridden by a valid flag below: not a problem
	}
	args := []string{"-read-timeout", "5s", "-write-timeout", "never", "-addr", "localhost", "-log-format", "xml", "-nope", "stray"}
	_, err := server.LoadConfig(args, env(vars), &bytes.Buffer{})
	var ce *server.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("LoadConfig: %v, want a *ConfigError", err)
	}
	msg := err.Error()
	t.Logf("the report:\n%s", msg)
	for _, want := range []string{
		"PREDICTKIT_BCRYPT_COST (-bcrypt-cost)", "PREDICTKIT_LOG_LEVEL (-log-level)", "PREDICTKIT_DEMO (-demo)",
		"PREDICTKIT_TRADE_BATCH_SIZE (-trade-batch-size)", "PREDICTKIT_AUDIT_INTERVAL (-audit-interval)",
		"PREDICTKIT_ADMIN_TOKEN (-admin-token)", "PREDICTKIT_DATABASE_URL (-database-url)",
		"PREDICTKIT_CHAT_WEBHOOK_URL (-chat-webhook-url)", "PREDICTKIT_CHAT_FAQ (-chat-faq)",
		"PREDICTKIT_RATE_LOGIN (-rate-login)", "PREDICTKIT_CORS_ORIGINS (-cors-origins)",
		"PREDICTKIT_TRUSTED_PROXIES (-trusted-proxies)", "PREDICTKIT_REDIS_URL (-redis-url)",
		"PREDICTKIT_WRITE_TIMEOUT (-write-timeout)", "PREDICTKIT_ADDR (-addr)", "PREDICTKIT_LOG_FORMAT (-log-format)",
		"-nope", `unexpected arguments ["stray"]`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the report does not mention %s", want)
		}
	}
	if len(ce.Problems) != 18 {
		t.Errorf("%d problems reported, want 18 (one per problem)", len(ce.Problems))
	}
	for _, p := range ce.Problems {
		if strings.Contains(p.Error(), "\n") {
			t.Errorf("a problem spans lines: %q", p)
		}
	}
	if strings.Contains(msg, "PREDICTKIT_READ_TIMEOUT") {
		t.Error("a malformed variable that a valid flag overrides is reported")
	}
	for _, secret := range []string{"hunter2", "short-secret", "secret-path", "redis-secret-pw"} {
		if strings.Contains(msg, secret) {
			t.Errorf("the report repeats the secret %q", secret)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	t.Run("variables, then flags, make a valid configuration", func(t *testing.T) {
		c, err := server.LoadConfig([]string{"-addr", "127.0.0.1:9000", "-audit-interval", "5m"},
			env(map[string]string{"PREDICTKIT_ADDR": ":7000", "PREDICTKIT_DEMO": "0", "PREDICTKIT_LOG_LEVEL": "debug", "PREDICTKIT_TRADE_BATCH_WAIT": ""}), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Addr != "127.0.0.1:9000" || c.Demo || c.LogLevel != "debug" || c.AuditInterval != 5*time.Minute {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("-h lists every setting with its variable and default", func(t *testing.T) {
		var out bytes.Buffer
		_, err := server.LoadConfig([]string{"-h"}, env(nil), &out)
		if !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("err %v, want flag.ErrHelp", err)
		}
		for _, want := range []string{"PREDICTKIT_ADDR", ":8080", "PREDICTKIT_AUDIT_INTERVAL", "PREDICTKIT_RATE_LOGIN", "PREDICTKIT_CORS_ORIGINS", "-trade-batch-size"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the usage lacks %s", want)
			}
		}
	})
	t.Run("Validate names the setting of each problem", func(t *testing.T) {
		c := server.DefaultConfig()
		c.BcryptCost, c.LogFormat, c.AuditInterval = 99, "xml", -time.Second
		err := c.Validate()
		for _, want := range []string{"PREDICTKIT_BCRYPT_COST", "PREDICTKIT_LOG_FORMAT", "PREDICTKIT_AUDIT_INTERVAL"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Validate: %v; want %s named", err, want)
			}
		}
	})
}
