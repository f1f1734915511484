package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

func TestPasswordResetSettings(t *testing.T) {
	cases := []struct {
		name  string
		vars  map[string]string
		wants []string // in the error; none: it loads
	}{
		{"an SMTP URL and a public URL load", map[string]string{
			"PREDICTKIT_SMTP_URL":   "smtps://mailer:hunter2@smtp.example.com?from=noreply@example.com",
			"PREDICTKIT_PUBLIC_URL": "https://app.example.com",
		}, nil},
		{"an SMTP URL of another scheme is refused without quoting its password", map[string]string{
			"PREDICTKIT_SMTP_URL": "http://mailer:hunter2@smtp.example.com?from=noreply@example.com",
		}, []string{"PREDICTKIT_SMTP_URL (-smtp-url)", "smtp://", "smtps://"}},
		{"an SMTP URL without a sender is refused", map[string]string{
			"PREDICTKIT_SMTP_URL": "smtp://smtp.example.com",
		}, []string{"PREDICTKIT_SMTP_URL (-smtp-url)", "from="}},
		{"a public URL that is not absolute is refused", map[string]string{
			"PREDICTKIT_PUBLIC_URL": "app.example.com",
		}, []string{"PREDICTKIT_PUBLIC_URL (-public-url)", "absolute"}},
		{"a public URL with a query is refused", map[string]string{
			"PREDICTKIT_PUBLIC_URL": "https://app.example.com/?x=1",
		}, []string{"PREDICTKIT_PUBLIC_URL (-public-url)", "no query"}},
		{"a reset limit that is no rate is refused", map[string]string{
			"PREDICTKIT_RATE_PASSWORD_RESET_EMAIL": "often",
		}, []string{"PREDICTKIT_RATE_PASSWORD_RESET_EMAIL (-rate-password-reset-email)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := server.LoadConfig(nil, env(c.vars), &bytes.Buffer{})
			if c.wants == nil {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.SMTPURL != c.vars["PREDICTKIT_SMTP_URL"] || cfg.PublicURL != c.vars["PREDICTKIT_PUBLIC_URL"] {
					t.Fatalf("loaded %q and %q", cfg.SMTPURL, cfg.PublicURL)
				}
				return
			}
			if err == nil {
				t.Fatal("it loads")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
	t.Run("the defaults limit reset requests to 30/h per address and 5/h per e-mail", func(t *testing.T) {
		d := server.DefaultConfig()
		if d.RatePasswordReset.String() != "30/h" || d.RatePasswordResetEmail.String() != "5/h" || d.SMTPURL != "" || d.PublicURL != "" {
			t.Fatalf("defaults %s %s %q %q", d.RatePasswordReset, d.RatePasswordResetEmail, d.SMTPURL, d.PublicURL)
		}
	})
}
