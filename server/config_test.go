package server_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

func TestConfigFromEnv(t *testing.T) {
	t.Run("with every variable empty it is the defaults: :8080, in memory, demo data, migrations", func(t *testing.T) {
		for _, k := range []string{"PREDICTKIT_ADDR", "PREDICTKIT_DATABASE_URL", "PREDICTKIT_DEMO", "PREDICTKIT_MIGRATE_ON_START", "PREDICTKIT_ADMIN_TOKEN",
			"PREDICTKIT_READ_TIMEOUT", "PREDICTKIT_WRITE_TIMEOUT", "PREDICTKIT_IDLE_TIMEOUT", "PREDICTKIT_BCRYPT_COST", "PREDICTKIT_LOG_LEVEL"} {
			t.Setenv(k, "")
		}
		c, err := server.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if c.Addr != ":8080" || c.DatabaseURL != "" || c.AdminToken != "" || !c.Demo || !c.MigrateOnStart ||
			c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 || c.BcryptCost != 10 || c.LogLevel != "info" {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("every variable is read", func(t *testing.T) {
		env := map[string]string{
			"PREDICTKIT_ADDR": "127.0.0.1:9999", "PREDICTKIT_DATABASE_URL": "postgres://x@y/z", "PREDICTKIT_ADMIN_TOKEN": "0123456789abcdefXYZ",
			"PREDICTKIT_DEMO": "0", "PREDICTKIT_MIGRATE_ON_START": "false", "PREDICTKIT_READ_TIMEOUT": "3s", "PREDICTKIT_WRITE_TIMEOUT": "4s",
			"PREDICTKIT_IDLE_TIMEOUT": "5s", "PREDICTKIT_SHUTDOWN_TIMEOUT": "6s", "PREDICTKIT_START_TIMEOUT": "7s", "PREDICTKIT_BCRYPT_COST": "12",
			"PREDICTKIT_TOKEN_TTL": "1h", "PREDICTKIT_LOG_LEVEL": "debug", "PREDICTKIT_LOG_FORMAT": "text", "PREDICTKIT_COOKIE_SECURE": "1",
			"PREDICTKIT_TRUSTED_PROXIES": "10.0.0.1, 10.1.0.0/16",
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		c, err := server.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if c.Addr != "127.0.0.1:9999" || c.DatabaseURL != "postgres://x@y/z" || c.AdminToken != "0123456789abcdefXYZ" || c.Demo || c.MigrateOnStart ||
			c.ReadTimeout != 3*time.Second || c.WriteTimeout != 4*time.Second || c.IdleTimeout != 5*time.Second ||
			c.ShutdownTimeout != 6*time.Second || c.StartTimeout != 7*time.Second || c.BcryptCost != 12 || c.TokenTTL != time.Hour ||
			c.LogLevel != "debug" || c.LogFormat != "text" || !c.CookieSecure || len(c.TrustedProxies) != 2 || c.TrustedProxies[1] != "10.1.0.0/16" {
			t.Errorf("config %+v", c)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("valid config refused: %v", err)
		}
	})
	t.Run("malformed variables are reported by name", func(t *testing.T) {
		t.Setenv("PREDICTKIT_DEMO", "maybe")
		t.Setenv("PREDICTKIT_IDLE_TIMEOUT", "-1s")
		t.Setenv("PREDICTKIT_BCRYPT_COST", "2")
		_, err := server.ConfigFromEnv()
		if err == nil {
			t.Fatal("accepted")
		}
		for _, name := range []string{"PREDICTKIT_DEMO", "PREDICTKIT_IDLE_TIMEOUT", "PREDICTKIT_BCRYPT_COST"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, name)
			}
		}
	})
}

func TestConfigFlags(t *testing.T) {
	t.Run("flags override the environment", func(t *testing.T) {
		t.Setenv("PREDICTKIT_ADDR", ":7000")
		t.Setenv("PREDICTKIT_DEMO", "1")
		c, err := server.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c.RegisterFlags(fs)
		if err := fs.Parse([]string{"-addr", ":7001", "-demo=false", "-read-timeout", "2s", "-trusted-proxies", "1.2.3.4"}); err != nil {
			t.Fatal(err)
		}
		if c.Addr != ":7001" || c.Demo || c.ReadTimeout != 2*time.Second || len(c.TrustedProxies) != 1 {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("a boolean flag alone means true", func(t *testing.T) {
		c := server.DefaultConfig()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c.RegisterFlags(fs)
		if err := fs.Parse([]string{"-cookie-secure"}); err != nil || !c.CookieSecure {
			t.Errorf("-cookie-secure: %v, %v", err, c.CookieSecure)
		}
	})
	t.Run("a malformed flag is refused", func(t *testing.T) {
		c := server.DefaultConfig()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(&bytes.Buffer{})
		c.RegisterFlags(fs)
		if err := fs.Parse([]string{"-bcrypt-cost", "x"}); err == nil {
			t.Error("accepted")
		}
	})
	t.Run("the usage lists every flag with its variable and default", func(t *testing.T) {
		var out bytes.Buffer
		server.PrintSettings(&out)
		for _, want := range []string{"-addr", "PREDICTKIT_ADDR", ":8080", "PREDICTKIT_DEMO", "PREDICTKIT_ADMIN_TOKEN", "PREDICTKIT_MIGRATE_ON_START"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("usage lacks %s:\n%s", want, out.String())
			}
		}
	})
}
