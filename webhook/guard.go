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
// unless listed, and so is an IPv6 address that carries a refused IPv4
// address (IPv4-mapped, -compatible or -translated, NAT64, 6to4, Teredo,
// ISATAP), whether typed in the URL or answered by DNS.
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
	// NAT64's local-use prefix: where the IPv4 address sits depends on
	// the operator's translator, so the whole prefix is refused. (The
	// well-known prefix, 64:ff9b::/96, is judged by the address it
	// carries: see embeddedIPv4.)
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
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
// wrapping ErrDestination that says why not. An IPv6 address that
// carries an IPv4 address (see embeddedIPv4) is refused when the IPv4
// address would be: packets to it reach the IPv4 host, through the
// kernel, a tunnel or a translator.
func (g *Guard) Allowed(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	if g.listed(a) {
		return nil
	}
	why := g.refusal(a)
	if why == "" {
		for _, e := range embeddedIPv4(a) {
			if g.listed(e.addr) {
				continue
			}
			if w := g.refusal(e.addr); w != "" {
				why = fmt.Sprintf("%s of %s, %s", e.form, e.addr, w)
				break
			}
		}
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is %s (list it in PREDICTKIT_WEBHOOK_ALLOWED_HOSTS to allow it)", ErrDestination, a, why)
}

// listed reports whether a is in a range or is an address the operator
// allowed.
func (g *Guard) listed(a netip.Addr) bool {
	for _, p := range g.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// refusal says what kind of refused address a is, or "" when a is a
// public address that is not the server's.
func (g *Guard) refusal(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, b := range blocked {
		if b.p.Contains(a) {
			return b.why
		}
	}
	if g.own[a] {
		return "an address of this server"
	}
	return ""
}

// embedding is an IPv4 address found inside an IPv6 one, and the form
// that carries it.
type embedding struct {
	form string
	addr netip.Addr
}

// The IPv6 forms that carry an IPv4 address at a fixed place. (IPv4-mapped
// addresses, ::ffff:0:0/96, are unmapped before anything else.)
var (
	compatible = netip.MustParsePrefix("::/96")           // IPv4-compatible (deprecated): the last 32 bits
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT): the last 32 bits
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // NAT64's well-known prefix: the last 32 bits
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4: bits 16 to 48
	teredo     = netip.MustParsePrefix("2001::/32")       // Teredo: the server in bits 32 to 64, the client's address inverted in the last 32
)

// embeddedIPv4 returns the IPv4 addresses that a carries, in every
// transition form it matches (an address may match several: a 6to4
// prefix with an ISATAP interface id carries two).
func embeddedIPv4(a netip.Addr) []embedding {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	at := func(i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }
	var out []embedding
	switch {
	case compatible.Contains(a):
		out = append(out, embedding{"an IPv4-compatible address", at(12)})
	case translated.Contains(a):
		out = append(out, embedding{"an IPv4-translated address", at(12)})
	case nat64.Contains(a):
		out = append(out, embedding{"a NAT64 address", at(12)})
	case sixToFour.Contains(a):
		out = append(out, embedding{"a 6to4 address", at(2)})
	case teredo.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		out = append(out, embedding{"a Teredo address", at(4)}, embedding{"a Teredo address", netip.AddrFrom4(client)})
	}
	// ISATAP's interface id, under any /64 prefix: 0000:5efe or, with
	// the universal bit, 0200:5efe, then the IPv4 address.
	if b[8]&^0x02 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		out = append(out, embedding{"an ISATAP address", at(12)})
	}
	return out
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
