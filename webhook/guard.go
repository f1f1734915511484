package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/predictkit/predictkit/input"
)

// MaxURLLen bounds a webhook URL.
const MaxURLLen = 2048

// Resolver finds the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which destinations deliveries may go to. A webhook URL is
// the operator's, but it is typed from what a partner asks for, and the
// server sends to it from inside the operator's network: without a guard
// it could reach the database, a cloud metadata service or an admin port
// (server-side request forgery). So only public addresses are allowed,
// plus the host names, addresses and ranges the operator lists; loopback,
// private, link-local, carrier-grade NAT, unspecified, multicast and
// broadcast addresses, and the server host's own addresses, are refused
// unless listed.
//
// The check is made when a webhook is set (on what its host resolves to
// then) and again at every delivery on the address actually dialled (a
// net.Dialer Control hook), because a name that resolved to a public
// address when the webhook was set may resolve to 127.0.0.1 at delivery
// (DNS rebinding). A host listed by name is trusted whatever it resolves
// to.
type Guard struct {
	names    map[string]bool
	prefixes []netip.Prefix
	own      map[netip.Addr]bool
	// Resolver resolves host names, at registration and at delivery;
	// net.DefaultResolver unless replaced (tests).
	Resolver Resolver
}

// blocked are the ranges refused besides those netip classifies
// (loopback, private, link-local, multicast, unspecified).
var blocked = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64 address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
}

// NewGuard returns the guard of allowed, a comma-separated list of host
// names, IP addresses and CIDR ranges (PREDICTKIT_WEBHOOK_ALLOWED_HOSTS),
// and refuses own, the addresses the server listens on, as well as the
// host's interface addresses, unless listed.
func NewGuard(allowed string, own ...netip.Addr) (*Guard, error) {
	g := &Guard{names: map[string]bool{}, own: map[netip.Addr]bool{}, Resolver: net.DefaultResolver}
	for item := range strings.SplitSeq(allowed, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case strings.Contains(item, "/"):
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("webhook allowed hosts: %q is not a CIDR range", item)
			}
			g.prefixes = append(g.prefixes, p.Masked())
		default:
			if a, err := netip.ParseAddr(strings.Trim(item, "[]")); err == nil {
				a = a.Unmap().WithZone("")
				g.prefixes = append(g.prefixes, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			name := normalHost(item)
			if !validHostName(name) {
				return nil, fmt.Errorf("webhook allowed hosts: %q is not a host name, IP address or CIDR range", item)
			}
			g.names[name] = true
		}
	}
	for _, a := range own {
		if a.IsValid() && !a.IsUnspecified() {
			g.own[a.Unmap().WithZone("")] = true
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					g.own[ip.Unmap()] = true
				}
			}
		}
	}
	return g, nil
}

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// Allowed returns nil when deliveries may go to address a, or an error
// wrapping ErrDestination that says why not.
func (g *Guard) Allowed(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	for _, p := range g.prefixes {
		if p.Contains(a) {
			return nil
		}
	}
	why := ""
	switch {
	case a.IsLoopback():
		why = "a loopback address"
	case a.IsPrivate():
		why = "a private address"
	case a.IsMulticast():
		why = "a multicast address"
	case a.IsLinkLocalUnicast():
		why = "a link-local address"
	case a.IsUnspecified():
		why = "the unspecified address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		why = "the broadcast address"
	default:
		for _, b := range blocked {
			if b.p.Contains(a) {
				why = b.why
				break
			}
		}
		if why == "" && g.own[a] {
			why = "an address of this server"
		}
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is %s (list it in PREDICTKIT_WEBHOOK_ALLOWED_HOSTS to allow it)", ErrDestination, a, why)
}

// CheckURL checks a webhook URL and returns it as it will be used: http
// or https, a host, no user information or fragment, and a host that is
// listed or resolves only to allowed addresses. Its refusals are
// *input.Error on field "url".
func (g *Guard) CheckURL(ctx context.Context, raw string) (string, error) {
	bad := func(reason string) (string, error) { return "", input.Invalid("url", reason) }
	if raw == "" || len(raw) > MaxURLLen || !input.IsText(raw) {
		return bad(fmt.Sprintf("must be an http or https URL of at most %d characters", MaxURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("malformed URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("must be an http or https URL")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return bad("must name a host")
	case u.User != nil:
		return bad("must not carry a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("must not have a fragment")
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscan(p, &n); err != nil || n < 1 || n > 65535 || fmt.Sprint(n) != p {
			return bad("has an invalid port")
		}
	}
	host := normalHost(u.Hostname())
	if g.names[host] {
		return u.String(), nil
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return bad("the host does not resolve")
	}
	for _, a := range addrs {
		if err := g.Allowed(a); err != nil {
			return bad(strings.TrimPrefix(err.Error(), ErrDestination.Error()+": "))
		}
	}
	return u.String(), nil
}

func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if !validHostName(host) {
		return nil, errors.New("webhook: invalid host name")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.Resolver.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("webhook: no address")
	}
	return addrs, err
}

// control refuses to connect to an address the guard does not allow: the
// address the dialer is about to connect to, whatever a name resolved to
// before.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read the address %q", ErrDestination, address)
	}
	return g.Allowed(ap.Addr())
}

// DialContext connects to addr (host:port) for a delivery: a listed host
// name as is; any other through Resolver, each address checked as it is
// dialled. It is the Transport's DialContext of a Sender.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	if g.names[normalHost(host)] {
		return d.DialContext(ctx, network, addr)
	}
	d.Control = g.control
	addrs, err := g.resolve(ctx, normalHost(host))
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}
