package hookd_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// wireOnly are the headers net/http's transport adds on the wire, after the request's own
// headers are read; an attempt keeps the request's own.
var wireOnly = []string{"Accept-Encoding", "Content-Length"}

// keptAsSent is what an attempt should keep of a request that arrived with h: the headers as
// sent, less the transport's, the values of the endpoint's own headers (own) redacted.
func keptAsSent(h http.Header, own map[string]string) http.Header {
	want := h.Clone()
	for _, k := range wireOnly {
		delete(want, k)
	}
	for k := range own {
		ck := http.CanonicalHeaderKey(k)
		for i := range want[ck] {
			want[ck][i] = hookd.Redacted
		}
	}
	return want
}

// checkDetail compares each attempt of msg to ep, as the dashboard's attempt page reads it
// (Client.GetAttempt), with the request the receiver got at path, in order.
func checkDetail(t *testing.T, b *bundle, path, msg string, ep *hookd.Endpoint, own map[string]string) []hookd.Attempt {
	t.Helper()
	reqs := b.recv.Requests(path)
	listed := b.attempts(t, msg, ep.ID)
	if len(reqs) != len(listed) || len(reqs) == 0 {
		t.Fatalf("%d requests arrived, %d attempts recorded", len(reqs), len(listed))
	}
	var out []hookd.Attempt
	for i, r := range reqs {
		a, err := b.client.GetAttempt(b.ctx, b.app.ID, msg, listed[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := keptAsSent(r.Header, own)
		if !reflect.DeepEqual(a.RequestHeaders.Header, want) || a.RequestHeaders.Omitted != 0 {
			t.Errorf("attempt %d shows request headers\n%v\nwant those that arrived\n%v", i+1, a.RequestHeaders, want)
		}
		if !reflect.DeepEqual(listed[i].RequestHeaders, a.RequestHeaders) {
			t.Errorf("attempt %d lists request headers %v, shows %v", i+1, listed[i].RequestHeaders, a.RequestHeaders)
		}
		out = append(out, *a)
	}
	return out
}

// The attempt detail shows the request headers that arrived at the receiver, whatever the
// scheme and header set, with the endpoint's own headers redacted, and the response's headers
// as the receiver wrote them; retries, which sign again, show their own.
func TestAttemptShowsTheHeadersSent(t *testing.T) {
	t.Parallel()
	own := map[string]string{"x-api-key": "s3cret-credential", "X-Tenant": "t-1"}
	cases := []struct {
		name    string
		headers hookd.SignatureHeaders
		scheme  hookd.SignatureScheme
		sigName string // a signature header the request carries
	}{
		{"standard, both sets", hookd.HeadersBoth, hookd.SchemeStandard, "Svix-Signature"},
		{"standard, webhook-* only", hookd.HeadersWebhook, hookd.SchemeStandard, "Webhook-Signature"},
		{"svix", hookd.HeadersBoth, hookd.SchemeSvix, "Svix-Signature"},
		{"stripe", hookd.HeadersBoth, hookd.SchemeStripe, "Stripe-Signature"},
		{"envelope", hookd.HeadersBoth, hookd.SchemeEnvelope, "X-Webhook-Signature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.SignatureHeaders = tc.headers
			b := setup(t, cfg)
			fails := 0
			ep := b.endpoint(t, "/r", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Add("X-Trace", "a")
				w.Header().Add("X-Trace", "b: c")
				if fails < 1 {
					fails++ // one request at a time: the delivery's attempts are in sequence
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				w.Write([]byte(`{"ok":true}`))
			}), &hookd.EndpointIn{Scheme: tc.scheme, Headers: own})
			res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
			b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
			as := checkDetail(t, b, "/r", res.Message.ID, ep, own)
			if len(as) != 2 {
				t.Fatalf("%d attempts; want 2", len(as))
			}
			for _, a := range as {
				if a.RequestHeaders.Header.Get(tc.sigName) == "" {
					t.Errorf("no %s in %v", tc.sigName, a.RequestHeaders.Header)
				}
				resp := a.ResponseHeaders.Header
				if resp.Get("Date") == "" || resp.Get("Content-Type") != "application/json" ||
					!reflect.DeepEqual(resp["X-Trace"], []string{"a", "b: c"}) {
					t.Errorf("attempt %d shows response headers %v", a.Number, resp)
				}
			}
		})
	}
}

// An attempt signed by two keys during a rotation's grace shows both signatures, and still
// shows them once the old key is gone and the endpoint's own headers changed.
func TestAttemptShowsRotatedSignatures(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	own := map[string]string{"Authorization": "Bearer one"}
	ep := b.endpoint(t, "/r", hookdtest.OK(), &hookd.EndpointIn{Headers: own})
	if _, err := b.client.RotateSecretGrace(b.ctx, b.app.ID, ep.ID, "", time.Hour); err != nil {
		t.Fatal(err)
	}
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	before := checkDetail(t, b, "/r", res.Message.ID, ep, own)
	sig := before[0].RequestHeaders.Header.Get("Webhook-Signature")
	if n := len(strings.Fields(sig)); n != 2 {
		t.Fatalf("signature %q has %d values; want 2, one a key", sig, n)
	}
	if _, err := b.client.RotateSecretGrace(b.ctx, b.app.ID, ep.ID, "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.UpdateEndpoint(b.ctx, b.app.ID, ep.ID, &hookd.EndpointIn{URL: ep.URL,
		Headers: map[string]string{"X-Other": "2"}}); err != nil {
		t.Fatal(err)
	}
	after := checkDetail(t, b, "/r", res.Message.ID, ep, own)
	if !reflect.DeepEqual(before[0].RequestHeaders, after[0].RequestHeaders) {
		t.Errorf("after the rotation the attempt shows %v; before, %v", after[0].RequestHeaders, before[0].RequestHeaders)
	}
}

// An attempt whose headers an earlier build kept as JSON reads back as the same attempt kept in
// the compact form, on both stores: the row of a real attempt is rewritten as that build wrote it.
func TestOldAttemptHeadersReadBack(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var (
				store hookd.Store
				exec  func(q string, args ...any) error
				query func(q string, args ...any) (string, error)
			)
			switch backend {
			case "sqlite":
				s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
				if err != nil {
					t.Fatal(err)
				}
				store = s
				exec = func(q string, args ...any) error { _, err := s.DB().ExecContext(ctx, q, args...); return err }
				query = func(q string, args ...any) (v string, err error) {
					return v, s.DB().QueryRowContext(ctx, q, args...).Scan(&v)
				}
			case "postgres":
				u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
				if u == "" {
					t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL to run the PostgreSQL case")
				}
				s, err := postgres.Open(ctx, u, &postgres.Config{Schema: testSchema(t, u)})
				if err != nil {
					t.Fatal(err)
				}
				store = s
				exec = func(q string, args ...any) error {
					_, err := s.Pool().Exec(ctx, strings.ReplaceAll(strings.ReplaceAll(q, "?1", "$1"), "?2", "$2"), args...)
					return err
				}
				query = func(q string, args ...any) (v string, err error) {
					return v, s.Pool().QueryRow(ctx, strings.ReplaceAll(q, "?1", "$1"), args...).Scan(&v)
				}
			}
			t.Cleanup(func() { _ = store.Close() })
			recv := hookdtest.NewReceiver()
			t.Cleanup(recv.Close)
			c, err := hookd.NewClient(store, testConfig())
			if err != nil {
				t.Fatal(err)
			}
			app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme"})
			if err != nil {
				t.Fatal(err)
			}
			ep, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL("/r"), Headers: map[string]string{"X-Key": "k"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Stop(context.Background()) })
			res, err := c.Send(ctx, app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}})
			if err != nil {
				t.Fatal(err)
			}
			var a *hookd.Attempt
			for deadline := time.Now().Add(30 * time.Second); a == nil; time.Sleep(10 * time.Millisecond) {
				page, err := c.ListAttempts(ctx, app.ID, hookd.AttemptFilter{MessageID: res.Message.ID, EndpointID: ep.ID})
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Data) > 0 {
					a = &page.Data[0]
				} else if time.Now().After(deadline) {
					t.Fatal("no attempt recorded in 30 s")
				}
			}
			raw, err := query(`SELECT request_headers FROM hookd_attempts WHERE id = ?1`, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(raw, "~") || strings.Contains(raw, res.Message.ID) {
				t.Errorf("request headers kept as %q; want the compact form, without the message id", raw)
			}
			if len(a.RequestHeaders.Header) < 8 || len(a.ResponseHeaders.Header) == 0 {
				t.Fatalf("attempt headers %v and %v; want the signature's and the response's", a.RequestHeaders, a.ResponseHeaders)
			}
			if err := exec(`UPDATE hookd_attempts SET request_headers = ?1, response_headers = ?2 WHERE id = '`+a.ID+`'`,
				a.RequestHeaders.Encode(), a.ResponseHeaders.Encode()); err != nil {
				t.Fatal(err)
			}
			old, err := c.GetAttempt(ctx, app.ID, res.Message.ID, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(old.RequestHeaders, a.RequestHeaders) || !reflect.DeepEqual(old.ResponseHeaders, a.ResponseHeaders) {
				t.Errorf("kept as JSON, the attempt reads back\n%v\n%v\nwant\n%v\n%v", old.RequestHeaders, old.ResponseHeaders,
					a.RequestHeaders, a.ResponseHeaders)
			}
		})
	}
}

// A response's headers are kept up to MaxResponseHeaderBytes, the longest left out first and
// counted: the short ones a receiver's code sets stay.
func TestAttemptResponseHeadersBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	long := strings.Repeat("default-src 'self'; ", 60) // 1,200 bytes
	ep := b.endpoint(t, "/r", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", long)
		w.Header().Set("Report-To", strings.Repeat("r", 800))
		w.Header().Add("Set-Cookie", "session="+strings.Repeat("c", 300))
		w.Header().Add("Set-Cookie", "lang=en")
		w.Header().Set("Retry-After", "30")
		w.Header().Set("X-Request-Id", "req-1")
		w.WriteHeader(http.StatusTooManyRequests)
	}), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.recv.Wait(b.ctx, "/r", 1)
	var as []hookd.Attempt
	for deadline := time.Now().Add(10 * time.Second); len(as) == 0; time.Sleep(10 * time.Millisecond) {
		if as = b.attempts(t, res.Message.ID, ep.ID); len(as) == 0 && time.Now().After(deadline) {
			t.Fatal("no attempt recorded")
		}
	}
	h := as[0].ResponseHeaders
	size := 0
	for k, vs := range h.Header {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	if size > hookd.MaxResponseHeaderBytes {
		t.Errorf("%d bytes of response headers kept; want at most %d", size, hookd.MaxResponseHeaderBytes)
	}
	if h.Omitted != 2 || h.Header.Get("Content-Security-Policy") != "" || h.Header.Get("Report-To") != "" {
		t.Errorf("%d values left out, kept %v; want the two longest left out", h.Omitted, h.Header)
	}
	if h.Header.Get("Retry-After") != "30" || h.Header.Get("X-Request-Id") != "req-1" ||
		!reflect.DeepEqual(h.Header["Set-Cookie"], []string{"session=" + strings.Repeat("c", 300), "lang=en"}) || h.Header.Get("Date") == "" {
		t.Errorf("response headers kept: %v; want the short ones", h.Header)
	}
}
