package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/webhook"
)

// ipv6Form writes an IPv4 address in one of the IPv6 forms that carry one.
type ipv6Form struct {
	name string
	// of returns the IPv6 address that carries v4.
	of func(v4 [4]byte) string
	// always is what the guard says of the form whatever it carries
	// ("" when it judges the IPv4 address).
	always string
}

var (
	publicServer = [4]byte{8, 8, 4, 4}
	publicClient = [4]byte{93, 184, 216, 34}
)

func hex16(a, b byte) string { return fmt.Sprintf("%x", uint16(a)<<8|uint16(b)) }

func hexPair(v4 [4]byte) string { return hex16(v4[0], v4[1]) + ":" + hex16(v4[2], v4[3]) }

func inverted(v4 [4]byte) [4]byte { return [4]byte{^v4[0], ^v4[1], ^v4[2], ^v4[3]} }

var ipv6Forms = []ipv6Form{
	{name: "IPv4-mapped", of: func(v [4]byte) string { return "::ffff:" + netip.AddrFrom4(v).String() }},
	{name: "IPv4-compatible", of: func(v [4]byte) string { return "::" + hexPair(v) }},
	{name: "IPv4-translated", of: func(v [4]byte) string { return "::ffff:0:" + hexPair(v) }},
	{name: "NAT64", of: func(v [4]byte) string { return "64:ff9b::" + hexPair(v) }},
	{name: "local-use NAT64", of: func(v [4]byte) string { return "64:ff9b:1::" + hexPair(v) }, always: "local-use NAT64"},
	{name: "6to4", of: func(v [4]byte) string { return "2002:" + hexPair(v) + "::1" }},
	{name: "6to4 with a zero host", of: func(v [4]byte) string { return "2002:" + hexPair(v) + "::" }},
	{name: "Teredo (server)", of: func(v [4]byte) string {
		return "2001:0:" + hexPair(v) + ":8000:f227:" + hexPair(inverted(publicClient))
	}},
	{name: "Teredo (client)", of: func(v [4]byte) string {
		return "2001:0:" + hexPair(publicServer) + ":8000:f227:" + hexPair(inverted(v))
	}},
	{name: "ISATAP", of: func(v [4]byte) string { return "2606:4700:10::5efe:" + hexPair(v) }},
	{name: "ISATAP (universal)", of: func(v [4]byte) string { return "2606:4700:10::200:5efe:" + hexPair(v) }},
	{name: "6to4 and ISATAP", of: func(v [4]byte) string { return "2002:" + hexPair(publicServer) + ":1::5efe:" + hexPair(v) }},
}

// embeddedCases are the IPv4 addresses the forms carry: refused ones,
// with what the guard calls them, and public ones ("").
var embeddedCases = []struct {
	v4   string
	kind string
}{
	{"127.0.0.1", "loopback"},
	{"127.255.255.254", "loopback"},
	{"10.0.0.1", "private"},
	{"172.16.0.1", "private"},
	{"172.31.255.254", "private"},
	{"192.168.1.1", "private"},
	{"169.254.169.254", "link-local"},
	{"169.254.0.1", "link-local"},
	{"0.1.2.3", "\"this network\""},
	{"100.64.0.1", "carrier-grade NAT"},
	{"8.8.8.8", ""},
	{"93.184.216.34", ""},
}

// TestGuardJudgesTheIPv4AddressAnIPv6AddressCarries: every IPv6 form
// that reaches an IPv4 host is refused when that host would be, at
// registration (typed in the URL or answered by DNS) and when dialling;
// the same forms of a public address stay allowed.
func TestGuardJudgesTheIPv4AddressAnIPv6AddressCarries(t *testing.T) {
	g, err := webhook.NewGuard("")
	if err != nil {
		t.Fatal(err)
	}
	r := &resolver{}
	g.Resolver = r
	for _, f := range ipv6Forms {
		for _, c := range embeddedCases {
			v4 := netip.MustParseAddr(c.v4).As4()
			a := netip.MustParseAddr(f.of(v4))
			want := c.kind
			if f.always != "" {
				want = f.always
			}
			t.Run(fmt.Sprintf("%s of %s (%s)", f.name, c.v4, a), func(t *testing.T) {
				check := func(what string, err error, sentinel error) {
					t.Helper()
					switch {
					case want == "" && err != nil:
						t.Errorf("%s: refused (%v); want it allowed", what, err)
					case want != "" && err == nil:
						t.Errorf("%s: allowed; want it refused as %s", what, want)
					case want != "" && !errors.Is(err, sentinel):
						t.Errorf("%s: %v; want %v", what, err, sentinel)
					case want != "" && !strings.Contains(err.Error(), want):
						t.Errorf("%s: %v; want it to say %q", what, err, want)
					}
				}
				check("Allowed", g.Allowed(a), webhook.ErrDestination)
				_, err := g.CheckURL(context.Background(), "http://"+net.JoinHostPort(a.String(), "8080")+"/hook")
				check("the URL with the address", err, input.ErrInvalid)
				r.addrs.Store([]netip.Addr{a})
				_, err = g.CheckURL(context.Background(), "https://hooks.partner.example/hook")
				check("a URL whose host resolves to the address", err, input.ErrInvalid)
				check("dialling the address", g.Control("tcp6", net.JoinHostPort(a.String(), "443")), webhook.ErrDestination)
			})
		}
	}
}

func TestGuardRefusesTheFormsNamedInTheIssue(t *testing.T) {
	g, err := webhook.NewGuard("")
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		"http://[::127.0.0.1]/",
		"http://[2002:7f00:1::]/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:0:127.0.0.1]/",
		"http://[64:ff9b::169.254.169.254]/latest/meta-data/",
		"http://[2002:a9fe:a9fe::]/latest/meta-data/",
		"http://[fe80::5efe:10.0.0.1]/",
		"http://[fec0::1]/",
	} {
		t.Run(raw+" is refused", func(t *testing.T) {
			if _, err := g.CheckURL(context.Background(), raw); !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("got %v; want an invalid url", err)
			}
		})
	}
}

// TestGuardAllowsAFormOfAListedAddress: an address the operator lists is
// allowed in every form that carries it, as it is as IPv4-mapped.
func TestGuardAllowsAFormOfAListedAddress(t *testing.T) {
	g, err := webhook.NewGuard("10.1.2.0/24")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"::ffff:10.1.2.3", "2002:a01:203::1", "64:ff9b::a01:203"} {
		if err := g.Allowed(netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	if err := g.Allowed(netip.MustParseAddr("2002:a01:303::1")); !errors.Is(err, webhook.ErrDestination) {
		t.Errorf("a 6to4 address of 10.1.3.3, outside the listed range: %v", err)
	}
}
