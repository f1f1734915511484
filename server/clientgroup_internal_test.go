package server

import (
	"testing"
	"time"
)

func TestClientGroup(t *testing.T) {
	for _, c := range []struct{ ip, want string }{
		{"198.51.100.7", "198.51.100.7"},
		{"::ffff:198.51.100.7", "198.51.100.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"not an address", "not an address"},
	} {
		t.Run(c.ip+" counts as "+c.want, func(t *testing.T) {
			if got := clientGroup(c.ip); got != c.want {
				t.Fatalf("clientGroup(%q) = %q, want %q", c.ip, got, c.want)
			}
		})
	}
}

func TestLimiterRefund(t *testing.T) {
	t.Run("a refunded take is as if it had not happened", func(t *testing.T) {
		clk := &fakeClock{time.Unix(1000, 0)}
		l := newLimiter(Rate{N: 2, Per: time.Minute}, clk.now)
		l.take("k")
		l.take("k")
		l.refund("k")
		if ok, _ := l.take("k"); !ok {
			t.Fatal("the refunded token is not back")
		}
		if ok, wait := l.take("k"); ok || wait != 30*time.Second {
			t.Fatalf("after the refund's token: ok %v, wait %v", ok, wait)
		}
	})
	t.Run("refunding a key that holds nothing changes nothing", func(t *testing.T) {
		l := newLimiter(Rate{N: 1, Per: time.Minute}, (&fakeClock{time.Unix(1000, 0)}).now)
		l.refund("nobody")
		if l.size() != 0 {
			t.Fatal("a bucket appeared")
		}
	})
}
