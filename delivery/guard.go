package delivery

import (
	"errors"
	"net/netip"
	"syscall"

	"code.dny.dev/ssrf"
)

// ErrBlocked is wrapped by the error of an attempt the SSRF guard refused:
// the endpoint's host resolved to an address hookd does not call (loopback,
// private, link-local, shared, multicast, reserved...). Check with
// errors.Is(result.Err, ErrBlocked).
var ErrBlocked = errors.New("blocked by the SSRF guard")

// guard refuses connections to internal addresses. Its control method runs
// as net.Dialer.Control, after DNS resolution and before connect, so it
// judges the address actually dialed: a name that resolves to a public
// address when checked and to a private one when dialed (DNS rebinding)
// cannot get past it.
type guard struct {
	ssrf *ssrf.Guardian
}

// newGuard returns a guard that refuses what code.dny.dev/ssrf refuses on
// any port, except the allowed prefixes.
func newGuard(allow []netip.Prefix) *guard {
	var v4, v6 []netip.Prefix
	for _, p := range allow {
		if !p.IsValid() {
			continue
		}
		p = unmapPrefix(p).Masked()
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	return &guard{ssrf: ssrf.New(
		ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(v4...),
		ssrf.WithAllowedV6Prefixes(v6...),
	)}
}

// control is a net.Dialer.Control function. An IPv4-mapped IPv6 address
// (::ffff:10.0.0.1) is judged, allow-list included, as the IPv4 address it
// carries.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedError{msg: "blocked: " + address + " is not an IP address and port", err: err}
	}
	ip := ap.Addr()
	plain := netip.AddrPortFrom(ip.Unmap(), ap.Port())
	if err := g.ssrf.Safe(network, plain.String(), nil); err != nil {
		if errors.Is(err, ssrf.ErrProhibitedNetwork) {
			return &blockedError{msg: "blocked: network " + network + " is not permitted", err: err}
		}
		class, prefix := addressClass(ip)
		return &blockedError{msg: "blocked: " + ip.String() + " is " + class + allowHint(prefix), err: err}
	}
	return nil
}

// CheckAddress returns the error with which the SSRF guard, allowing the
// prefixes of allow, refuses a connection to ip (it wraps ErrBlocked), or nil
// when it lets it through. It lets a caller warn about an endpoint before any
// attempt is made; the guard itself judges every address it dials.
func CheckAddress(ip netip.Addr, allow []netip.Prefix) error {
	network := "tcp6"
	if ip.Unmap().Is4() {
		network = "tcp4"
	}
	return newGuard(allow).control(network, netip.AddrPortFrom(ip, 443).String(), nil)
}

// unmapPrefix turns an IPv4-mapped IPv6 prefix (::ffff:10.0.0.0/104) into
// its IPv4 form (10.0.0.0/8).
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// blockedError is the guard's refusal. Its message names the address and
// its class; it unwraps to ErrBlocked and to the ssrf package's reason.
type blockedError struct {
	msg string
	err error
}

func (e *blockedError) Error() string   { return e.msg }
func (e *blockedError) Unwrap() []error { return []error{ErrBlocked, e.err} }

// addressClasses names the special-purpose ranges, most specific first.
var addressClasses = []struct {
	prefix netip.Prefix
	phrase string
}{
	{netip.MustParsePrefix("0.0.0.0/32"), "an unspecified address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "a reserved (\"this network\") address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.169.254/32"), "a link-local address (cloud metadata)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved (IETF protocol assignment) address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "a broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique-local address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// AddressRange returns what addressClass does: the class of an address the guard refuses, with
// its article ("a loopback address"), and the range of that class (127.0.0.0/8), the prefix that
// AllowSubnets (hookd serve --allow-subnets) needs to let it through.
func AddressRange(ip netip.Addr) (class string, prefix netip.Prefix) { return addressClass(ip) }

// addressClass describes the class of a refused address, with its article
// ("a loopback address"), and returns the range of that class. An
// IPv4-mapped address is described by the IPv4 address it carries; anything
// unnamed is "a reserved address", its range the address alone.
func addressClass(ip netip.Addr) (string, netip.Prefix) {
	ip = ip.WithZone("").Unmap()
	for _, c := range addressClasses {
		if c.prefix.Contains(ip) {
			return c.phrase, c.prefix
		}
	}
	return "a reserved address", netip.PrefixFrom(ip, ip.BitLen())
}

// allowHint says how to allow the addresses of prefix, for a library user
// (hookd.Config's Delivery, or delivery.Config, AllowSubnets) and for the
// operator of hookd serve (--allow-subnets).
func allowHint(prefix netip.Prefix) string {
	p := prefix.String()
	return "; to allow it, add " + p + " to Delivery.AllowSubnets (hookd serve --allow-subnets " + p + ")"
}
