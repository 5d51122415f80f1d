package delivery

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"github.com/hookd/hookd/internal/buildinfo"
)

// Defaults applied by [Config.WithDefaults].
const (
	// DefaultTimeout is the total time one attempt may take.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxResponseBody is how many bytes of a response body are kept.
	DefaultMaxResponseBody = 4096
)

// DefaultUserAgent is the User-Agent header sent with every attempt: "hookd/" and the running
// build's release without its "v", such as "hookd/0.1.0" (Svix's server sends
// "Svix-Webhooks/1.44.0"). A receiver that matches the prefix "hookd/" matches every release.
func DefaultUserAgent() string { return buildinfo.Read().UserAgent() }

// Config configures a [Client]. The zero value, or a nil *Config, means
// defaults.
type Config struct {
	// Timeout is the total time for one attempt: DNS lookup, connect, TLS
	// handshake, sending the request, waiting for the response headers and
	// reading the body. A caller's context can shorten it, never lengthen it.
	// Zero or less means the default: 15s.
	Timeout time.Duration

	// MaxResponseBody is how many bytes of the response body are kept;
	// reading stops there and the rest is never read. Zero or less means the
	// default: 4096.
	MaxResponseBody int64

	// AllowSubnets are exempt from the SSRF guard, for tests and for
	// deliveries to internal services. An IPv4-mapped IPv6 prefix
	// (::ffff:10.0.0.0/104) counts as its IPv4 form. Default: none.
	AllowSubnets []netip.Prefix

	// Proxy, when set, carries every attempt (http, https or socks5 URL).
	// The proxy is then trusted to refuse internal addresses, and the SSRF
	// guard is off. Environment variables such as HTTP_PROXY are never
	// read. Default: none (direct connections).
	Proxy *url.URL

	// UserAgent is the User-Agent header sent unless the request sets one.
	// Default: [DefaultUserAgent], such as "hookd/0.1.0".
	UserAgent string

	// MaxConnsPerHost caps the connections to one host, dialing, active and
	// idle together; attempts beyond it wait for a connection (within their
	// timeout). Idle keep-alive connections are kept up to 64 per host (and
	// never more than this cap). Zero or less means the default: 0
	// (unlimited).
	MaxConnsPerHost int

	// Resolver is used to look up endpoint hosts (and the proxy's host).
	// Every lookup the Client does goes through it; the SSRF guard judges
	// the addresses it returns, as dialed. Default: net.DefaultResolver.
	Resolver *net.Resolver
}

// WithDefaults returns a copy of c with every unset field given its default.
// A nil receiver returns the defaults.
func (c *Config) WithDefaults() *Config {
	out := &Config{}
	if c != nil {
		*out = *c
		out.AllowSubnets = slices.Clone(c.AllowSubnets)
		if c.Proxy != nil {
			p := *c.Proxy
			if c.Proxy.User != nil {
				u := *c.Proxy.User
				p.User = &u
			}
			out.Proxy = &p
		}
	}
	if out.Timeout <= 0 {
		out.Timeout = DefaultTimeout
	}
	if out.MaxResponseBody <= 0 {
		out.MaxResponseBody = DefaultMaxResponseBody
	}
	if out.UserAgent == "" {
		out.UserAgent = DefaultUserAgent()
	}
	if out.MaxConnsPerHost < 0 {
		out.MaxConnsPerHost = 0
	}
	if out.Resolver == nil {
		out.Resolver = net.DefaultResolver
	}
	return out
}
