// Package mailer sends e-mail through an SMTP server named by a URL, such
// as PREDICTKIT_SMTP_URL:
//
//	smtp://user:password@smtp.example.com:587?from=noreply@example.com
//	smtps://user:password@smtp.example.com?from=Predictkit%20%3Cnoreply@example.com%3E
//
// smtp:// connects in plain text and upgrades with STARTTLS whenever the
// server offers it (the query parameter starttls=required refuses a
// server that does not, starttls=off never upgrades); smtps:// speaks TLS
// from the first byte (implicit TLS, usually port 465). The default port
// is 587 for smtp:// and 465 for smtps://. The user name and password,
// when given, are sent with the strongest mechanism the server offers;
// PLAIN and LOGIN only over TLS, so that a password never crosses the
// network in the clear. from (required) is the sender: an address, or
// "Name <address>", percent-encoded.
package mailer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// DefaultTimeout bounds one mail: connecting, the SMTP conversation and
// the message.
const DefaultTimeout = 30 * time.Second

// STARTTLS policies of an smtp:// URL.
const (
	StartTLSOpportunistic = "opportunistic" // upgrade when the server offers it (the default)
	StartTLSRequired      = "required"      // refuse a server that does not offer it
	StartTLSOff           = "off"           // never upgrade
)

// Config is an SMTP server and the sender of the mails sent through it.
type Config struct {
	Host string
	Port int
	// Username and Password authenticate, when Username is set.
	Username, Password string
	// From is the sender, as an address with an optional name.
	From mail.Address
	// ImplicitTLS: TLS from the first byte (smtps://); otherwise StartTLS
	// is the policy of upgrading a plain connection.
	ImplicitTLS bool
	StartTLS    string
	// TLS, when set, replaces the default TLS settings (the system's
	// roots, the server named Host); tests trust their own certificate
	// with it.
	TLS *tls.Config
	// Timeout bounds one mail; 0 is DefaultTimeout.
	Timeout time.Duration
}

// ParseURL reads an SMTP URL (see the package documentation). Its
// errors never quote the URL, which may hold a password.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, errors.New("not a URL")
	}
	var c Config
	switch u.Scheme {
	case "smtp":
		c.Port, c.StartTLS = 587, StartTLSOpportunistic
	case "smtps":
		c.Port, c.ImplicitTLS = 465, true
	default:
		return Config{}, errors.New("the scheme must be smtp:// (STARTTLS when offered) or smtps:// (implicit TLS)")
	}
	c.Host = u.Hostname()
	if c.Host == "" {
		return Config{}, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, errors.New("the port must be a number from 1 to 65535")
		}
		c.Port = n
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	if u.Path != "" && u.Path != "/" {
		return Config{}, errors.New("an SMTP URL has no path")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Config{}, errors.New("the query does not parse")
	}
	for k, vs := range q {
		if len(vs) != 1 {
			return Config{}, fmt.Errorf("the parameter %s is given %d times", k, len(vs))
		}
		switch v := vs[0]; k {
		case "from":
			a, err := mail.ParseAddress(v)
			if err != nil {
				return Config{}, fmt.Errorf("from %q: not an e-mail address", v)
			}
			c.From = *a
		case "starttls":
			if c.ImplicitTLS {
				return Config{}, errors.New("starttls is for smtp:// URLs; smtps:// is TLS from the start")
			}
			switch v {
			case StartTLSOpportunistic, StartTLSRequired, StartTLSOff:
				c.StartTLS = v
			default:
				return Config{}, fmt.Errorf("starttls %q: must be opportunistic, required or off", v)
			}
		default:
			return Config{}, fmt.Errorf("unknown parameter %q (known: from, starttls)", k)
		}
	}
	if c.From.Address == "" {
		return Config{}, errors.New("no sender: add ?from=noreply@example.com")
	}
	return c, nil
}

// String describes c without its password, for logs.
func (c Config) String() string {
	scheme, tlsMode := "smtp", "STARTTLS "+c.StartTLS
	if c.ImplicitTLS {
		scheme, tlsMode = "smtps", "implicit TLS"
	}
	user := ""
	if c.Username != "" {
		user = c.Username + "@"
	}
	return fmt.Sprintf("%s://%s%s:%d (%s) from %s", scheme, user, c.Host, c.Port, tlsMode, c.From.String())
}

// A Message is one plain-text mail to one recipient.
type Message struct {
	To      string
	Subject string
	Text    string
}

// SMTP sends mail through the server of a Config. It opens a connection
// per mail, so it holds nothing between mails and is safe for concurrent
// use.
type SMTP struct {
	cfg Config
}

// New returns an SMTP sender for cfg.
func New(cfg Config) *SMTP {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &SMTP{cfg: cfg}
}

// Config is the configuration s sends with.
func (s *SMTP) Config() Config { return s.cfg }

// Send delivers m to the SMTP server, within the Config's timeout and
// ctx.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	msg := gomail.NewMsg()
	msg.FromMailAddress(&s.cfg.From)
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("mailer: recipient: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.cfg.Timeout)}
	if s.cfg.ImplicitTLS {
		opts = append(opts, gomail.WithSSL())
	} else {
		policy := gomail.TLSOpportunistic
		switch s.cfg.StartTLS {
		case StartTLSRequired:
			policy = gomail.TLSMandatory
		case StartTLSOff:
			policy = gomail.NoTLS
		}
		opts = append(opts, gomail.WithTLSPolicy(policy))
	}
	if s.cfg.TLS != nil {
		opts = append(opts, gomail.WithTLSConfig(s.cfg.TLS))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("mailer: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mailer: %s:%d: %w", s.cfg.Host, s.cfg.Port, err)
	}
	return nil
}
