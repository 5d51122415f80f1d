package delivery

import (
	"errors"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"code.dny.dev/ssrf"
)

func TestGuardBlocksLoopbackByDefault(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	c := newClient(t, nil)

	res := c.Post(t.Context(), &Request{URL: srv.URL})

	checkFailure(t, res, "blocked: 127.0.0.1 is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets (hookd serve --allow-subnets 127.0.0.0/8)")
	if !errors.Is(res.Err, ErrBlocked) {
		t.Errorf("errors.Is(Err, ErrBlocked) = false for %v", res.Err)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("server hit %d times, want 0", n)
	}
}

func TestGuardAllowSubnets(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	c := newClient(t, &Config{AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})

	res := c.Post(t.Context(), &Request{URL: srv.URL})

	if res.Err != nil || res.Outcome != Success {
		t.Errorf("Outcome, Err = %v, %v; want success", res.Outcome, res.Err)
	}
	if n := hits.n.Load(); n != 1 {
		t.Errorf("server hit %d times, want 1", n)
	}
}

func TestGuardBlocksNameResolvingToLoopback(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	// The guard judges the address dialed, after resolution: a name gets no
	// further than the address it resolves to.
	dns := newDNSServer(t, map[string]string{"hook.test": "127.0.0.1"})
	url := "http://hook.test" + port + "/hook"

	res := newClient(t, &Config{Resolver: dns.resolver()}).Post(t.Context(), &Request{URL: url})

	checkFailure(t, res, "blocked: 127.0.0.1 is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets (hookd serve --allow-subnets 127.0.0.0/8)")
	if !errors.Is(res.Err, ErrBlocked) {
		t.Errorf("errors.Is(Err, ErrBlocked) = false for %v", res.Err)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("server hit %d times, want 0", n)
	}
	if dns.questions("hook.test") == 0 {
		t.Error("the local DNS server was not asked about hook.test")
	}

	// Allowed, the same name reaches the server.
	res = localClient(t, Config{Resolver: dns.resolver()}).Post(t.Context(), &Request{URL: url})
	if res.Err != nil || res.Outcome != Success {
		t.Errorf("127.0.0.0/8 allowed: Outcome, Err = %v, %v; want success", res.Outcome, res.Err)
	}
	if n := hits.n.Load(); n != 1 {
		t.Errorf("127.0.0.0/8 allowed: server hit %d times, want 1", n)
	}
}

func TestGuardJudgesEachAttemptsAnswer(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	dns := newDNSServer(t, nil)
	c := newClient(t, &Config{Resolver: dns.resolver()})
	url := "http://later.test" + port + "/hook"

	// Unknown at first, then pointed at 127.0.0.1 while the Client lives:
	// the new answer is looked up and judged on the next attempt. Nothing
	// but 127.0.0.1 is ever dialed.
	checkFailure(t, c.Post(t.Context(), &Request{URL: url}), "DNS lookup failed for later.test: no such host")
	dns.set("later.test", "127.0.0.1")
	res := c.Post(t.Context(), &Request{URL: url})
	checkFailure(t, res, "blocked: 127.0.0.1 is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets (hookd serve --allow-subnets 127.0.0.0/8)")
	if !errors.Is(res.Err, ErrBlocked) {
		t.Errorf("errors.Is(Err, ErrBlocked) = false for %v", res.Err)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("server hit %d times, want 0", n)
	}
}

func TestGuardBlocksLocalhost(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	// localhost comes from /etc/hosts; should a machine's hosts file lack
	// it, the local DNS server answers, not the machine's nameserver.
	dns := newDNSServer(t, map[string]string{"localhost": "127.0.0.1"})
	c := newClient(t, &Config{Resolver: dns.resolver()})

	res := c.Post(t.Context(), &Request{URL: "http://localhost" + port + "/hook"})

	checkFailure(t, res, "blocked: ...")
	if !errors.Is(res.Err, ErrBlocked) || !strings.Contains(res.Message(), "is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets") {
		t.Errorf("Err = %v; want ErrBlocked, a loopback address", res.Err)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("server hit %d times, want 0", n)
	}
}

func TestGuardMappedAddressLiteral(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	url := "http://[::ffff:127.0.0.1]" + port + "/"

	res := newClient(t, nil).Post(t.Context(), &Request{URL: url})
	if !errors.Is(res.Err, ErrBlocked) || !strings.Contains(res.Message(), "is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets") {
		t.Errorf("default guard: Err = %v; want ErrBlocked, a loopback address", res.Err)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("server hit %d times, want 0", n)
	}

	res = localClient(t, Config{}).Post(t.Context(), &Request{URL: url})
	if res.Err != nil || res.Outcome != Success {
		t.Errorf("127.0.0.0/8 allowed: Outcome, Err = %v, %v; want success", res.Outcome, res.Err)
	}
}

func TestGuardControl(t *testing.T) {
	t.Parallel()
	g := newGuard(nil)
	tests := []struct {
		network, address string
		want             string // "" when allowed
	}{
		{"tcp4", "10.0.0.5:443", "blocked: 10.0.0.5 is a private address"},
		{"tcp4", "172.16.0.1:443", "blocked: 172.16.0.1 is a private address"},
		{"tcp4", "192.168.1.1:80", "blocked: 192.168.1.1 is a private address"},
		{"tcp4", "169.254.169.254:80", "blocked: 169.254.169.254 is a link-local address (cloud metadata)"},
		{"tcp4", "169.254.1.1:80", "blocked: 169.254.1.1 is a link-local address"},
		{"tcp4", "100.64.0.1:443", "blocked: 100.64.0.1 is a shared (CGNAT) address"},
		{"tcp4", "224.0.0.1:443", "blocked: 224.0.0.1 is a multicast address"},
		{"tcp4", "0.0.0.0:443", "blocked: 0.0.0.0 is an unspecified address"},
		{"tcp4", "127.0.0.1:8080", "blocked: 127.0.0.1 is a loopback address"},
		{"tcp4", "192.0.2.10:443", "blocked: 192.0.2.10 is a documentation address"},
		{"tcp4", "198.18.0.1:443", "blocked: 198.18.0.1 is a benchmarking address"},
		{"tcp4", "240.0.0.1:443", "blocked: 240.0.0.1 is a reserved address"},
		{"tcp4", "255.255.255.255:443", "blocked: 255.255.255.255 is a broadcast address"},
		{"tcp6", "[::1]:443", "blocked: ::1 is a loopback address"},
		{"tcp6", "[::]:443", "blocked: :: is an unspecified address"},
		{"tcp6", "[fc00::1]:443", "blocked: fc00::1 is a unique-local address"},
		{"tcp6", "[fd00:ec2::254]:80", "blocked: fd00:ec2::254 is a unique-local address"},
		{"tcp6", "[fe80::1]:443", "blocked: fe80::1 is a link-local address"},
		{"tcp6", "[fe80::1%eth0]:443", "blocked: fe80::1%eth0 is a link-local address"},
		{"tcp6", "[ff02::1]:443", "blocked: ff02::1 is a multicast address"},
		{"tcp6", "[2001:db8::1]:443", "blocked: 2001:db8::1 is a documentation address"},
		{"tcp6", "[64:ff9b::a00:1]:443", "blocked: 64:ff9b::a00:1 is a NAT64 address"},
		{"tcp6", "[::ffff:127.0.0.1]:443", "blocked: ::ffff:127.0.0.1 is a loopback address"},
		{"tcp6", "[::ffff:10.0.0.1]:443", "blocked: ::ffff:10.0.0.1 is a private address"},
		{"tcp6", "[::ffff:169.254.169.254]:80", "blocked: ::ffff:169.254.169.254 is a link-local address (cloud metadata)"},
		{"udp4", "8.8.8.8:53", "blocked: network udp4 is not permitted"},
		// Allowed, on any port. Only the function runs: nothing is dialed.
		{"tcp4", "8.8.8.8:443", ""},
		{"tcp4", "8.8.8.8:8080", ""},
		{"tcp4", "1.1.1.1:1", ""},
		{"tcp6", "[2606:4700::1111]:443", ""},
		{"tcp6", "[2606:4700::1111]:9443", ""},
		{"tcp6", "[::ffff:8.8.8.8]:443", ""},
	}
	for _, tt := range tests {
		err := g.control(tt.network, tt.address, nil)
		if tt.want == "" {
			if err != nil {
				t.Errorf("control(%s, %s) = %v, want allowed", tt.network, tt.address, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want+"; to allow it, add ") {
			t.Errorf("control(%s, %s) = %v, want %q", tt.network, tt.address, err, tt.want)
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("control(%s, %s): errors.Is(err, ErrBlocked) = false", tt.network, tt.address)
		}
	}
}

func TestGuardControlWrapsLibraryReason(t *testing.T) {
	t.Parallel()
	err := newGuard(nil).control("tcp4", "10.1.2.3:443", nil)
	if !errors.Is(err, ssrf.ErrProhibitedIP) {
		t.Errorf("errors.Is(err, ssrf.ErrProhibitedIP) = false for %v", err)
	}
	err = newGuard(nil).control("tcp4", "not-an-address", nil)
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("unparsable address: errors.Is(err, ErrBlocked) = false for %v", err)
	}
}

func TestGuardControlAllowList(t *testing.T) {
	t.Parallel()
	g := newGuard([]netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::ffff:10.0.0.0/104"), // mapped form of 10.0.0.0/8
		netip.MustParsePrefix("fd00::/8"),
		{}, // invalid: ignored
	})
	for _, tt := range []struct {
		network, address string
		allowed          bool
	}{
		{"tcp4", "127.0.0.1:8080", true},
		{"tcp6", "[::ffff:127.0.0.1]:8080", true}, // the allow-list applies to mapped forms
		{"tcp4", "10.20.30.40:443", true},
		{"tcp6", "[::ffff:10.20.30.40]:443", true},
		{"tcp6", "[fd12::1]:443", true},
		{"tcp6", "[::1]:443", false},
		{"tcp4", "192.168.1.1:443", false},
		{"tcp6", "[::ffff:192.168.1.1]:443", false},
		{"tcp6", "[fc00::1]:443", false},
	} {
		err := g.control(tt.network, tt.address, nil)
		if (err == nil) != tt.allowed {
			t.Errorf("control(%s, %s) = %v, want allowed=%v", tt.network, tt.address, err, tt.allowed)
		}
	}
}

// TestGuardBlockedNamesWhatAllowsIt: every refusal of an address names a range
// that contains it and the settings that allow it, and a guard that allows
// that range lets the address through.
func TestGuardBlockedNamesWhatAllowsIt(t *testing.T) {
	t.Parallel()
	hintRE := regexp.MustCompile(`^blocked: (\S+) is [^;]+; to allow it, add (\S+) to Delivery\.AllowSubnets \(hookd serve --allow-subnets (\S+)\)$`)
	for _, tt := range []struct{ network, address, prefix string }{
		{"tcp4", "127.0.0.1:8080", "127.0.0.0/8"},
		{"tcp4", "10.1.2.3:443", "10.0.0.0/8"},
		{"tcp4", "169.254.169.254:80", "169.254.169.254/32"},
		{"tcp4", "169.254.1.1:80", "169.254.0.0/16"},
		{"tcp6", "[::1]:443", "::1/128"},
		{"tcp6", "[fe80::1]:443", "fe80::/10"},
		{"tcp6", "[::ffff:192.168.1.1]:443", "192.168.0.0/16"},
		{"tcp6", "[100::1]:443", "100::1/128"}, // a discard-only address, unnamed: the address alone
	} {
		err := newGuard(nil).control(tt.network, tt.address, nil)
		if err == nil {
			t.Errorf("control(%s, %s) allowed it", tt.network, tt.address)
			continue
		}
		m := hintRE.FindStringSubmatch(err.Error())
		if m == nil || m[2] != tt.prefix || m[3] != tt.prefix {
			t.Errorf("control(%s, %s) = %q; want a hint naming %s", tt.network, tt.address, err, tt.prefix)
			continue
		}
		if err := newGuard([]netip.Prefix{netip.MustParsePrefix(m[2])}).control(tt.network, tt.address, nil); err != nil {
			t.Errorf("with %s allowed, control(%s, %s) = %v, want allowed", m[2], tt.network, tt.address, err)
		}
	}
}

// TestCheckAddress: CheckAddress refuses what the guard refuses, with its
// message, and lets through a public address and an allowed one.
func TestCheckAddress(t *testing.T) {
	t.Parallel()
	err := CheckAddress(netip.MustParseAddr("127.0.0.1"), nil)
	if !errors.Is(err, ErrBlocked) || !strings.HasPrefix(err.Error(), "blocked: 127.0.0.1 is a loopback address; to allow it, add 127.0.0.0/8") {
		t.Errorf("CheckAddress(127.0.0.1) = %v", err)
	}
	if err := CheckAddress(netip.MustParseAddr("fd00::1"), nil); !errors.Is(err, ErrBlocked) {
		t.Errorf("CheckAddress(fd00::1) = %v, want ErrBlocked", err)
	}
	if err := CheckAddress(netip.MustParseAddr("8.8.8.8"), nil); err != nil {
		t.Errorf("CheckAddress(8.8.8.8) = %v, want nil", err)
	}
	if err := CheckAddress(netip.MustParseAddr("10.1.2.3"), []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}); err != nil {
		t.Errorf("CheckAddress(10.1.2.3) with 10.0.0.0/8 allowed = %v, want nil", err)
	}
}
