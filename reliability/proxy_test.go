package reliability

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// cutProxy forwards PostgreSQL connections and, once armed, cuts the
// first connection on which the server answers a command with the armed
// tag (CommandComplete "COMMIT", "BEGIN", "UPDATE 1"...): it drops that
// answer and closes both sides. Cut at "COMMIT", the database has
// committed and the client never hears it: the ambiguous commit, on
// demand, with no special server.
type cutProxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu    sync.Mutex
	armed string // tag prefix; "" when disarmed
	cuts  int
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{t: t, ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

// proxied returns dbURL pointing at the proxy, and the proxy for dbURL's
// host.
func proxied(t *testing.T, dbURL string) (string, *cutProxy) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("parse the database URL: %v", err)
	}
	p := newCutProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return u.String(), p
}

// arm makes the proxy cut the next connection whose server answers a
// command whose tag starts with tag.
func (p *cutProxy) arm(tag string) {
	p.mu.Lock()
	p.armed = tag
	p.mu.Unlock()
}

// cutCount is how many connections the proxy has cut.
func (p *cutProxy) cutCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() {
			_, _ = io.Copy(s, c)
			s.Close()
		}()
		go p.serverToClient(s, c)
	}
}

// serverToClient forwards the server's messages one by one (a type byte,
// a length, a payload) and cuts at the armed tag.
func (p *cutProxy) serverToClient(s, c net.Conn) {
	defer c.Close()
	defer s.Close()
	r := bufio.NewReader(s)
	var head [5]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if head[0] == 'C' {
			tag := string(bytes.TrimRight(body, "\x00"))
			p.mu.Lock()
			cut := p.armed != "" && strings.HasPrefix(tag, p.armed)
			if cut {
				p.armed = ""
				p.cuts++
			}
			p.mu.Unlock()
			if cut {
				return // neither this answer nor anything after it arrives
			}
		}
		if _, err := c.Write(append(head[:], body...)); err != nil {
			return
		}
	}
}
