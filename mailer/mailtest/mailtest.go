// Package mailtest runs an SMTP server in process, for tests of code that
// sends mail: it accepts every mail sent to it and hands each over on a
// channel, decoded. It listens on 127.0.0.1 only.
package mailtest

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// A Mail is one mail the server received.
type Mail struct {
	// From and To are the envelope's sender and recipients.
	From string
	To   []string
	// Header is the message's header; Text its body, decoded from its
	// transfer encoding.
	Header mail.Header
	Text   string
	// TLS tells whether the mail came over TLS (STARTTLS or implicit).
	TLS bool
	// User is the user name the client authenticated with, or "".
	User string
}

// Options change how the server behaves.
type Options struct {
	// TLS, when set, is the server's certificate: with Implicit it speaks
	// TLS from the first byte (smtps), otherwise it offers STARTTLS.
	TLS      *tls.Config
	Implicit bool
	// Username and Password, when set, are the only credentials it
	// accepts (PLAIN), and it refuses mail from a client that did not
	// authenticate.
	Username, Password string
}

// Server is a running SMTP server.
type Server struct {
	srv  *smtp.Server
	ln   net.Listener
	mail chan Mail
	opts Options
	done chan struct{}
}

// Start starts a server with no TLS and no authentication.
func Start() (*Server, error) { return StartWith(Options{}) }

// StartWith starts a server with opts.
func StartWith(opts Options) (*Server, error) {
	var ln net.Listener
	var err error
	if opts.TLS != nil && opts.Implicit {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", opts.TLS)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, mail: make(chan Mail, 100), opts: opts, done: make(chan struct{})}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, c: c}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.srv.MaxMessageBytes = 1 << 20
	if opts.TLS != nil && !opts.Implicit {
		s.srv.TLSConfig = opts.TLS
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the smtp:// (or smtps://) URL of the server with sender from,
// as mailer.ParseURL reads it.
func (s *Server) URL(from string) string {
	scheme := "smtp"
	if s.opts.TLS != nil && s.opts.Implicit {
		scheme = "smtps"
	}
	return scheme + "://" + s.Addr() + "?from=" + strings.ReplaceAll(from, "@", "%40")
}

// Mail is where the received mails arrive, in order.
func (s *Server) Mail() <-chan Mail { return s.mail }

// Next waits up to timeout for the next mail.
func (s *Server) Next(timeout time.Duration) (Mail, error) {
	select {
	case m := <-s.mail:
		return m, nil
	case <-time.After(timeout):
		return Mail{}, fmt.Errorf("mailtest: no mail within %s", timeout)
	}
}

// Close stops the server.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

type session struct {
	s    *Server
	c    *smtp.Conn
	user string
	m    Mail
}

func (x *session) AuthMechanisms() []string {
	if x.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != x.s.opts.Username || password != x.s.opts.Password {
			return errors.New("invalid credentials")
		}
		x.user = username
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.s.opts.Username != "" && x.user == "" {
		return smtp.ErrAuthRequired
	}
	_, isTLS := x.c.TLSConnectionState()
	x.m = Mail{From: from, TLS: isTLS, User: x.user}
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.m.To = append(x.m.To, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	var body io.Reader = msg.Body
	switch strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	text, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	m := x.m
	m.Header, m.Text = msg.Header, strings.ReplaceAll(string(text), "\r\n", "\n")
	select {
	case x.s.mail <- m:
		return nil
	default:
		return errors.New("mailtest: too many mails not read")
	}
}

func (x *session) Reset()        { x.m = Mail{} }
func (x *session) Logout() error { return nil }
