package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
)

// delivered is one request a test receiver got.
type delivered struct {
	header http.Header
	body   []byte
}

// deliveryReceiver is an HTTP server that answers 200 and hands each request to the channel.
func deliveryReceiver(t *testing.T) (*httptest.Server, chan delivered) {
	t.Helper()
	got := make(chan delivered, 8)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivered{header: r.Header.Clone(), body: body}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)
	return recv, got
}

// headerSet returns the three headers of h named prefix+"id", "timestamp" and "signature", alone,
// and whether all three are there.
func headerSet(h http.Header, prefix string) (http.Header, bool) {
	out := http.Header{}
	for _, n := range []string{"id", "timestamp", "signature"} {
		if v := h.Get(prefix + n); v != "" {
			out.Set(prefix+n, v)
		}
	}
	return out, len(out) == 3
}

// TestServeSignatureHeaders delivers through a real "hookd serve" and checks each header set with
// the receiver library that reads it: the Standard Webhooks library (webhook-*), and svix's
// Webhook given svix-* alone.
func TestServeSignatureHeaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		args                  []string
		wantWebhook, wantSvix bool
	}{
		{"default", nil, true, true},
		{"both", []string{"--signature-headers", "both"}, true, true},
		{"webhook", []string{"--signature-headers", "webhook"}, true, false},
		{"svix", []string{"--signature-headers", "svix"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recv, got := deliveryReceiver(t)
			args := append([]string{"--listen", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(t.TempDir(), "hookd.db"),
				"--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--workers", "2"}, tc.args...)
			s := startServe(t, args...)
			mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
			mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/acme/endpoint", testAdminToken, `{"url":"`+recv.URL+`/hook","uid":"hook"}`)
			secret := mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/acme/endpoint/hook/secret", testAdminToken, "")["key"].(string)
			msg := mustCall(t, http.StatusAccepted, http.MethodPost, s.url+"/api/v1/app/acme/msg", testAdminToken, `{"eventType":"invoice.paid","payload":{"invoice":"in_1"}}`)

			var d delivered
			select {
			case d = <-got:
			case <-time.After(20 * time.Second):
				t.Fatal("no delivery in 20 s")
			}
			webhookSet, ok := headerSet(d.header, "webhook-")
			if ok != tc.wantWebhook {
				t.Errorf("webhook-* present = %v, want %v: %v", ok, tc.wantWebhook, d.header)
			}
			if ok {
				wh, err := standardwebhooks.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				if err := wh.Verify(d.body, webhookSet); err != nil {
					t.Errorf("webhook-* refused by the Standard Webhooks library: %v", err)
				}
				if webhookSet.Get("webhook-id") != msg["id"] {
					t.Errorf("webhook-id %q, want the message id %q", webhookSet.Get("webhook-id"), msg["id"])
				}
			}
			svixSet, ok := headerSet(d.header, "svix-")
			if ok != tc.wantSvix {
				t.Errorf("svix-* present = %v, want %v: %v", ok, tc.wantSvix, d.header)
			}
			if ok {
				wh, err := svix.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				if err := wh.Verify(d.body, svixSet); err != nil {
					t.Errorf("svix-* refused by svix's Webhook: %v", err)
				}
				if svixSet.Get("svix-id") != msg["id"] {
					t.Errorf("svix-id %q, want the message id %q", svixSet.Get("svix-id"), msg["id"])
				}
			}
		})
	}
}

// TestServeSignatureHeadersConfig pins --signature-headers and HOOKD_SIGNATURE_HEADERS: the
// default, the variable, the flag over the variable, and the error for an unknown value.
func TestServeSignatureHeadersConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
		want hookd.SignatureHeaders
	}{
		{"", nil, hookd.HeadersBoth},
		{"svix", nil, hookd.HeadersSvix},
		{"webhook", nil, hookd.HeadersWebhook},
		{"svix", []string{"--signature-headers", "both"}, hookd.HeadersBoth},
		{"", []string{"--signature-headers", "WEBHOOK"}, hookd.HeadersWebhook},
	} {
		lookup := func(k string) (string, bool) {
			return tc.env, k == "HOOKD_SIGNATURE_HEADERS" && tc.env != ""
		}
		c, err := parseServeConfig(quietEnv(), tc.args, lookup)
		if err != nil {
			t.Fatalf("env %q args %q: %v", tc.env, tc.args, err)
		}
		if c.sigHeaders != tc.want {
			t.Errorf("env %q args %q: %v, want %v", tc.env, tc.args, c.sigHeaders, tc.want)
		}
	}

	r := run(t, "", "serve", "--signature-headers", "stripe")
	if want := `--signature-headers "stripe": use both, webhook or svix`; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("--signature-headers stripe: exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, want)
	}
	_, err := parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		return "none", k == "HOOKD_SIGNATURE_HEADERS"
	})
	if want := `HOOKD_SIGNATURE_HEADERS (for --signature-headers) "none": use both, webhook or svix`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("HOOKD_SIGNATURE_HEADERS=none: %v, want %q", err, want)
	}
}
