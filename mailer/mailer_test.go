package mailer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/mailer"
	"github.com/predictkit/predictkit/mailer/mailtest"
)

func TestParseURL(t *testing.T) {
	good := []struct {
		name, url string
		want      mailer.Config
	}{
		{"smtp:// defaults to port 587 and STARTTLS when offered", "smtp://smtp.example.com?from=noreply@example.com",
			mailer.Config{Host: "smtp.example.com", Port: 587, StartTLS: mailer.StartTLSOpportunistic}},
		{"smtps:// defaults to port 465 and implicit TLS", "smtps://smtp.example.com?from=noreply@example.com",
			mailer.Config{Host: "smtp.example.com", Port: 465, ImplicitTLS: true}},
		{"credentials are percent-decoded", "smtp://us%40er:p%40ss%3Aword@smtp.example.com:2525?from=noreply@example.com",
			mailer.Config{Host: "smtp.example.com", Port: 2525, Username: "us@er", Password: "p@ss:word", StartTLS: mailer.StartTLSOpportunistic}},
		{"starttls=required and off are kept", "smtp://h?from=noreply@example.com&starttls=required",
			mailer.Config{Host: "h", Port: 587, StartTLS: mailer.StartTLSRequired}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			got, err := mailer.ParseURL(c.url)
			if err != nil {
				t.Fatal(err)
			}
			if got.From.Address != "noreply@example.com" {
				t.Fatalf("from = %v", got.From)
			}
			got.From = c.want.From
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
	bad := []struct{ name, url, says string }{
		{"another scheme is refused", "http://h?from=a@example.com", "scheme"},
		{"no host is refused", "smtp://?from=a@example.com", "host"},
		{"a bad port is refused", "smtp://h:99999?from=a@example.com", "port"},
		{"no sender is refused", "smtp://h", "from"},
		{"a sender that is no address is refused", "smtp://h?from=nobody", "from"},
		{"an unknown parameter is refused", "smtp://h?from=a@example.com&tls=yes", "unknown parameter"},
		{"an unknown starttls policy is refused", "smtp://h?from=a@example.com&starttls=maybe", "starttls"},
		{"starttls with smtps is refused", "smtps://h?from=a@example.com&starttls=off", "starttls"},
		{"a path is refused", "smtp://h/x?from=a@example.com", "path"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := mailer.ParseURL(c.url)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want one about %q", err, c.says)
			}
		})
	}
	t.Run("an error never quotes the password", func(t *testing.T) {
		_, err := mailer.ParseURL("ftp://user:hunter2@h?from=a@example.com")
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("err = %v", err)
		}
		c, _ := mailer.ParseURL("smtp://user:hunter2@h?from=a@example.com")
		if strings.Contains(c.String(), "hunter2") {
			t.Fatalf("String() = %s", c)
		}
	})
}

// TestSend sends through an SMTP server in this process, in each TLS mode.
func TestSend(t *testing.T) {
	serverTLS, clientTLS, err := mailtest.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opts    mailtest.Options
		query   string // added to the URL
		user    string // user:password@
		wantTLS bool
		fails   string
	}{
		{name: "a server without TLS gets the mail in plain text", wantTLS: false},
		{name: "a server offering STARTTLS gets the mail over TLS", opts: mailtest.Options{TLS: serverTLS}, wantTLS: true},
		{name: "smtps speaks TLS from the start", opts: mailtest.Options{TLS: serverTLS, Implicit: true}, wantTLS: true},
		{name: "credentials are sent over TLS", opts: mailtest.Options{TLS: serverTLS, Username: "mailer", Password: "s3cret"}, user: "mailer:s3cret@", wantTLS: true},
		{name: "wrong credentials are refused", opts: mailtest.Options{TLS: serverTLS, Username: "mailer", Password: "s3cret"}, user: "mailer:wrong@", fails: "AUTH"},
		{name: "starttls=required refuses a server without it", query: "&starttls=required", fails: "STARTTLS"},
		{name: "starttls=off stays in plain text", opts: mailtest.Options{TLS: serverTLS}, query: "&starttls=off", wantTLS: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := mailtest.StartWith(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			u := srv.URL("noreply@example.com") + c.query
			u = strings.Replace(u, "://", "://"+c.user, 1)
			cfg, err := mailer.ParseURL(u)
			if err != nil {
				t.Fatal(err)
			}
			cfg.TLS, cfg.Timeout = clientTLS, 10*time.Second
			err = mailer.New(cfg).Send(context.Background(), mailer.Message{To: "ann@example.com", Subject: "Reset", Text: "Your link:\nhttps://app.example.com/reset?token=" + strings.Repeat("x", 90)})
			if c.fails != "" {
				if err == nil || !strings.Contains(err.Error(), c.fails) {
					t.Fatalf("err = %v, want one about %s", err, c.fails)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := srv.Next(10 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if m.TLS != c.wantTLS || m.From != "noreply@example.com" || len(m.To) != 1 || m.To[0] != "ann@example.com" {
				t.Fatalf("got %+v", m)
			}
			if !strings.Contains(m.Text, "token="+strings.Repeat("x", 90)) || m.Header.Get("Subject") != "Reset" {
				t.Fatalf("the body or subject is not what was sent: %q %q", m.Header.Get("Subject"), m.Text)
			}
			if c.user != "" && m.User != "mailer" {
				t.Fatalf("authenticated as %q", m.User)
			}
		})
	}
}
