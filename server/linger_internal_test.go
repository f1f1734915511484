package server

import (
	"net"
	"testing"
)

func TestLingerBounds(t *testing.T) {
	pipe := func(t *testing.T, l *lingerListener) *lingerConn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return &lingerConn{Conn: a, l: l}
	}
	t.Run("no more than maxLingering connections linger at once", func(t *testing.T) {
		l := &lingerListener{lingering: make(map[*lingerConn]struct{})}
		var first *lingerConn
		for i := range maxLingering {
			c := pipe(t, l)
			if !l.admit(c) {
				t.Fatalf("connection %d was refused", i+1)
			}
			if first == nil {
				first = c
			}
		}
		over := pipe(t, l)
		if l.admit(over) {
			t.Fatalf("connection %d lingers", maxLingering+1)
		}
		l.release(first)
		if !l.admit(over) {
			t.Fatal("a connection is refused once another stopped lingering")
		}
	})
	t.Run("none lingers once the listener is closed", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := &lingerListener{Listener: ln, lingering: make(map[*lingerConn]struct{})}
		_ = l.Close()
		if l.admit(pipe(t, l)) {
			t.Fatal("a connection lingers after the listener closed")
		}
	})
}
