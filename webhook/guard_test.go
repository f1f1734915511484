package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/webhook"
)

func TestGuardAllowsOnlyPublicAddressesUnlessListed(t *testing.T) {
	g, err := webhook.NewGuard("10.1.2.0/24, 127.0.0.1, hooks.internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1:248:1893:25c8:1946", true},
		{"10.1.2.3", true},         // listed range
		{"127.0.0.1", true},        // listed address
		{"127.0.0.2", false},       // loopback
		{"::1", false},             // loopback
		{"10.9.9.9", false},        // private, outside the listed range
		{"192.168.1.1", false},     // private
		{"172.16.0.1", false},      // private
		{"fd00::1", false},         // unique local
		{"169.254.169.254", false}, // link-local: cloud metadata
		{"fe80::1", false},         // link-local
		{"0.0.0.0", false},         // unspecified
		{"::", false},              // unspecified
		{"224.0.0.1", false},       // multicast
		{"ff02::1", false},         // multicast
		{"100.64.0.1", false},      // carrier-grade NAT
		{"255.255.255.255", false},
		{"::ffff:127.0.0.2", false}, // loopback in IPv6 clothing
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := g.Allowed(netip.MustParseAddr(tc.addr))
			if tc.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, webhook.ErrDestination) {
				t.Errorf("allowed (%v)", err)
			}
		})
	}
}

func TestGuardRefusesItsOwnAddress(t *testing.T) {
	g, err := webhook.NewGuard("", netip.MustParseAddr("93.184.216.34"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Allowed(netip.MustParseAddr("93.184.216.34")); !errors.Is(err, webhook.ErrDestination) || !strings.Contains(err.Error(), "this server") {
		t.Errorf("the server's own address: %v", err)
	}
}

func TestNewGuardRefusesWhatIsNotAHostAddressOrRange(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "bad host", "a..b", "http://x"} {
		if _, err := webhook.NewGuard(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// resolver answers every name with addrs.
type resolver struct{ addrs atomic.Value }

func (r *resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r.addrs.Load().([]netip.Addr), nil
}

func TestCheckURL(t *testing.T) {
	g, err := webhook.NewGuard("listed.example")
	if err != nil {
		t.Fatal(err)
	}
	r := &resolver{}
	r.addrs.Store([]netip.Addr{netip.MustParseAddr("93.184.216.34")})
	g.Resolver = r
	for _, tc := range []struct {
		name, url, reason string
	}{
		{"a public https URL is allowed", "https://hooks.partner.example/predictkit?x=1", ""},
		{"a public address is allowed", "http://93.184.216.34:8443/hook", ""},
		{"a listed host is allowed whatever it resolves to", "http://listed.example/hook", ""},
		{"another scheme is refused", "ftp://hooks.partner.example/", "must be an http or https URL"},
		{"a relative URL is refused", "/hook", "must be an http or https URL"},
		{"a URL without a host is refused", "http:///hook", "must name a host"},
		{"a malformed URL is refused", "http://[::1", "malformed URL"},
		{"user information is refused", "https://user:pw@hooks.partner.example/", "must not carry a user name or password"},
		{"a fragment is refused", "https://hooks.partner.example/#x", "must not have a fragment"},
		{"a bad port is refused", "https://hooks.partner.example:99999/", "has an invalid port"},
		{"loopback is refused", "http://127.0.0.1:8080/", "loopback"},
		{"IPv6 loopback is refused", "http://[::1]/", "loopback"},
		{"a private address is refused", "http://10.0.0.5/", "private"},
		{"cloud metadata is refused", "http://169.254.169.254/latest/meta-data", "link-local"},
		{"control characters are refused", "https://hooks.partner.example/\n", "http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := g.CheckURL(context.Background(), tc.url)
			if tc.reason == "" {
				if err != nil || got != tc.url {
					t.Fatalf("got %q, %v; want it allowed as is", got, err)
				}
				return
			}
			if !errors.Is(err, input.ErrInvalid) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("got %q, %v; want an invalid url saying %q", got, err, tc.reason)
			}
		})
	}
	t.Run("a name that resolves to a private address is refused", func(t *testing.T) {
		r.addrs.Store([]netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("192.168.0.10")})
		if _, err := g.CheckURL(context.Background(), "https://sneaky.example/"); err == nil || !strings.Contains(err.Error(), "private") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestDialRefusesARebindingName: a name that resolved to a public address
// when the webhook was set and resolves to loopback at delivery is
// refused on the address dialled; the receiver never hears of it.
func TestDialRefusesARebindingName(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	g, err := webhook.NewGuard("")
	if err != nil {
		t.Fatal(err)
	}
	r := &resolver{}
	r.addrs.Store([]netip.Addr{netip.MustParseAddr("93.184.216.34")})
	g.Resolver = r
	hook := "http://rebind.example:" + port + "/hook"
	if _, err := g.CheckURL(context.Background(), hook); err != nil {
		t.Fatalf("at registration: %v", err)
	}
	r.addrs.Store([]netip.Addr{netip.MustParseAddr("127.0.0.1")})
	c := &http.Client{Transport: &http.Transport{DialContext: g.DialContext}}
	_, err = c.Post(hook, "application/json", strings.NewReader("{}"))
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, webhook.ErrDestination) {
		t.Fatalf("delivery to the rebound name: %v; want it refused", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver got %d requests", hits.Load())
	}
	listed, err := webhook.NewGuard("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	listed.Resolver = r
	c = &http.Client{Transport: &http.Transport{DialContext: listed.DialContext}}
	res, err := c.Post(hook, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("with the address listed: %v", err)
	}
	res.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("the receiver got %d requests, want 1", hits.Load())
	}
}
