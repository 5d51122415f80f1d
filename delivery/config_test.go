package delivery

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/internal/buildinfo"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	var nilConfig *Config
	d := nilConfig.WithDefaults()
	if d.Timeout != 15*time.Second || d.MaxResponseBody != 4096 || d.UserAgent != "hookd/"+strings.TrimPrefix(buildinfo.Release, "v") ||
		d.MaxConnsPerHost != 0 || d.Proxy != nil || d.AllowSubnets != nil || d.Resolver != net.DefaultResolver {
		t.Errorf("nil.WithDefaults() = %+v", d)
	}
	if z := (&Config{Timeout: -1, MaxResponseBody: -1, MaxConnsPerHost: -3}).WithDefaults(); z.Timeout != 15*time.Second ||
		z.MaxResponseBody != 4096 || z.MaxConnsPerHost != 0 {
		t.Errorf("negative fields: WithDefaults() = %+v", z)
	}

	resolver := &net.Resolver{PreferGo: true}
	proxy := &url.URL{Scheme: "http", Host: "proxy.internal:3128", User: url.UserPassword("u", "p")}
	in := &Config{
		Timeout:         time.Second,
		MaxResponseBody: 10,
		AllowSubnets:    []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Proxy:           proxy,
		UserAgent:       "x/1",
		MaxConnsPerHost: 4,
		Resolver:        resolver,
	}
	out := in.WithDefaults()
	if out == in || out.Timeout != time.Second || out.MaxResponseBody != 10 || out.UserAgent != "x/1" ||
		out.MaxConnsPerHost != 4 || out.Proxy.String() != proxy.String() || len(out.AllowSubnets) != 1 ||
		out.Resolver != resolver {
		t.Errorf("WithDefaults() = %+v, want the set fields kept", out)
	}
	// A copy: changing it leaves the original alone.
	out.AllowSubnets[0] = netip.MustParsePrefix("192.168.0.0/16")
	out.Proxy.Host = "elsewhere:1"
	if in.AllowSubnets[0].String() != "10.0.0.0/8" || in.Proxy.Host != "proxy.internal:3128" {
		t.Errorf("WithDefaults shares memory with its receiver: %+v", in)
	}
}
