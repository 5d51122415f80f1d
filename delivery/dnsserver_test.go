package delivery

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a DNS server on 127.0.0.1, over UDP and TCP, for tests that
// look names up: no query leaves the machine. It answers A queries from its
// table, an AAAA (or any other) query for a name in the table with an empty
// NOERROR answer, and anything else with NXDOMAIN. Answers can change while
// it runs ([dnsServer.set]), and it counts the questions it was asked.
type dnsServer struct {
	udpAddr, tcpAddr string

	mu      sync.Mutex
	answers map[string]netip.Addr // by canonical name: "x.test."
	asked   map[string]int        // by canonical name
}

// newDNSServer starts a dnsServer answering names (without the trailing
// dot) with the IPv4 addresses given. It stops when the test ends.
func newDNSServer(t testing.TB, answers map[string]string) *dnsServer {
	t.Helper()
	s := &dnsServer{answers: make(map[string]netip.Addr), asked: make(map[string]int)}
	for name, ip := range answers {
		s.set(name, ip)
	}

	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	s.udpAddr, s.tcpAddr = pc.LocalAddr().String(), ln.Addr().String()

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := s.reply(buf[:n]); reply != nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				s.serveStream(conn)
			})
		}
	})
	t.Cleanup(func() {
		pc.Close()
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

// canonicalName is name as a lower-case fully qualified name: "x.test.".
func canonicalName(name string) string {
	name = strings.ToLower(name)
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}

// set makes name resolve to the IPv4 address ip from now on; an empty ip
// removes name, which then gets NXDOMAIN.
func (s *dnsServer) set(name, ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ip == "" {
		delete(s.answers, canonicalName(name))
		return
	}
	addr := netip.MustParseAddr(ip)
	if !addr.Is4() {
		panic("dnsServer: not an IPv4 address: " + ip)
	}
	s.answers[canonicalName(name)] = addr
}

// questions returns how many queries (of any type) named name.
func (s *dnsServer) questions(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[canonicalName(name)]
}

// resolver returns a pure-Go resolver that sends every query to s,
// whatever nameserver /etc/resolv.conf names. Names in /etc/hosts are
// still answered from there first, as they are for any Go resolver with
// the usual "files dns" order; those lookups send nothing.
func (s *dnsServer) resolver() *net.Resolver {
	return s.resolverOver("")
}

// resolverOver is resolver, but every query goes over network ("tcp" or
// "udp") when it is not empty.
func (s *dnsServer) resolverOver(network string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, nw, _ string) (net.Conn, error) {
			if network != "" {
				nw = network
			}
			var d net.Dialer
			switch nw {
			case "udp", "udp4", "udp6":
				return d.DialContext(ctx, "udp4", s.udpAddr)
			case "tcp", "tcp4", "tcp6":
				return d.DialContext(ctx, "tcp4", s.tcpAddr)
			}
			return nil, fmt.Errorf("dnsServer: network %q not served", nw)
		},
	}
}

// serveStream answers the length-prefixed queries of one TCP connection.
func (s *dnsServer) serveStream(conn net.Conn) {
	var size [2]byte
	for {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		query := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(conn, query); err != nil {
			return
		}
		reply := s.reply(query)
		if reply == nil {
			return
		}
		if _, err := conn.Write(binary.BigEndian.AppendUint16(nil, uint16(len(reply)))); err != nil {
			return
		}
		if _, err := conn.Write(reply); err != nil {
			return
		}
	}
}

// reply builds the answer to query, or returns nil for a message that is
// not a query with one question (no answer is sent).
func (s *dnsServer) reply(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response || h.OpCode != 0 {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	if _, err := p.Question(); !errors.Is(err, dnsmessage.ErrSectionDone) {
		return nil
	}

	name := canonicalName(q.Name.String())
	s.mu.Lock()
	s.asked[name]++
	addr, known := s.answers[name]
	s.mu.Unlock()

	rh := dnsmessage.Header{
		ID:                 h.ID,
		Response:           true,
		Authoritative:      true,
		RecursionDesired:   h.RecursionDesired,
		RecursionAvailable: true,
	}
	if !known || q.Class != dnsmessage.ClassINET {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil
	}
	if rh.RCode == dnsmessage.RCodeSuccess && q.Type == dnsmessage.TypeA {
		hdr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
		if b.AResource(hdr, dnsmessage.AResource{A: addr.As4()}) != nil {
			return nil
		}
	}
	msg, err := b.Finish()
	if err != nil {
		return nil
	}
	return msg
}

func TestDNSServer(t *testing.T) {
	t.Parallel()
	dns := newDNSServer(t, map[string]string{"host.test": "127.0.0.1"})
	for _, network := range []string{"udp", "tcp"} {
		r := dns.resolverOver(network)
		lookup := func(ipNet, name string) ([]netip.Addr, error) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			return r.LookupNetIP(ctx, ipNet, name)
		}

		addrs, err := lookup("ip4", "Host.Test")
		if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("%s: lookup host.test = %v, %v; want 127.0.0.1", network, addrs, err)
		}
		// Any AAAA answer is empty: there is no IPv6 address to be had.
		if addrs, err = lookup("ip6", "host.test"); err == nil {
			t.Errorf("%s: lookup ip6 host.test = %v; want an error", network, addrs)
		}
		_, err = lookup("ip", "nowhere.test")
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("%s: lookup nowhere.test: err = %v; want not found", network, err)
		}
	}

	// An answer changes at run time. Only looked up, never dialed.
	r := dns.resolver()
	dns.set("host.test", "203.0.113.7")
	addrs, err := r.LookupNetIP(t.Context(), "ip", "host.test")
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("203.0.113.7") {
		t.Errorf("after set: lookup host.test = %v, %v; want 203.0.113.7", addrs, err)
	}
	dns.set("host.test", "")
	if addrs, err = r.LookupNetIP(t.Context(), "ip", "host.test"); err == nil {
		t.Errorf("after removal: lookup host.test = %v; want an error", addrs)
	}
	if n := dns.questions("host.test"); n == 0 {
		t.Error("no question about host.test counted")
	}
}
