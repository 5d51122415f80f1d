package hookd_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/sqlite"
)

// onlyHeaders returns the headers of h named in names, so that a receiver library sees one set
// alone and cannot fall back on the other.
func onlyHeaders(h http.Header, names ...string) http.Header {
	out := http.Header{}
	for _, n := range names {
		if v := h.Get(n); v != "" {
			out.Set(n, v)
		}
	}
	return out
}

func TestSignatureHeaderSets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		headers               hookd.SignatureHeaders
		scheme                hookd.SignatureScheme
		wantWebhook, wantSvix bool
	}{
		{"default: both", hookd.HeadersBoth, "", true, true},
		{"webhook only", hookd.HeadersWebhook, hookd.SchemeStandard, true, false},
		{"svix only", hookd.HeadersSvix, hookd.SchemeStandard, false, true},
		{"scheme svix keeps svix-* alone", hookd.HeadersBoth, hookd.SchemeSvix, false, true},
		{"scheme svix under webhook-only headers", hookd.HeadersWebhook, hookd.SchemeSvix, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.SignatureHeaders = tc.headers
			b := setup(t, cfg)
			ep := b.endpoint(t, "/hook", hookdtest.OK(), &hookd.EndpointIn{Scheme: tc.scheme})
			secret, err := b.client.EndpointSecret(b.ctx, b.app.ID, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
			reqs, err := b.recv.Wait(b.ctx, "/hook", 1)
			if err != nil {
				t.Fatal(err)
			}
			h := reqs[0].Header

			webhookSet := onlyHeaders(h, "webhook-id", "webhook-timestamp", "webhook-signature")
			if got := len(webhookSet) == 3; got != tc.wantWebhook {
				t.Errorf("webhook-* headers present = %v, want %v (%v)", got, tc.wantWebhook, h)
			}
			if tc.wantWebhook {
				wh, err := standardwebhooks.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				if err := wh.Verify(reqs[0].Body, webhookSet); err != nil {
					t.Errorf("the Standard Webhooks library refused webhook-*: %v", err)
				}
				if webhookSet.Get("webhook-id") != res.Message.ID {
					t.Errorf("webhook-id = %q, want %q", webhookSet.Get("webhook-id"), res.Message.ID)
				}
			}

			svixSet := onlyHeaders(h, "svix-id", "svix-timestamp", "svix-signature")
			if got := len(svixSet) == 3; got != tc.wantSvix {
				t.Errorf("svix-* headers present = %v, want %v (%v)", got, tc.wantSvix, h)
			}
			if tc.wantSvix {
				wh, err := svix.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				if err := wh.Verify(reqs[0].Body, svixSet); err != nil {
					t.Errorf("svix's Webhook refused svix-*: %v", err)
				}
				if svixSet.Get("svix-id") != res.Message.ID {
					t.Errorf("svix-id = %q, want %q", svixSet.Get("svix-id"), res.Message.ID)
				}
			}
		})
	}
}

func TestSignatureHeadersParse(t *testing.T) {
	t.Parallel()
	for _, h := range []hookd.SignatureHeaders{hookd.HeadersBoth, hookd.HeadersWebhook, hookd.HeadersSvix} {
		got, err := hookd.ParseSignatureHeaders(h.String())
		if err != nil || got != h {
			t.Errorf("ParseSignatureHeaders(%q) = %v, %v; want %v", h.String(), got, err, h)
		}
	}
	if _, err := hookd.ParseSignatureHeaders("stripe"); err == nil {
		t.Error("ParseSignatureHeaders(\"stripe\") accepted an unknown name")
	}
}

func TestConfigRefusesUnknownSignatureHeaders(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := testConfig()
	cfg.SignatureHeaders = hookd.SignatureHeaders(7)
	_, err = hookd.NewClient(store, cfg)
	if err == nil || !strings.Contains(err.Error(), "Config.SignatureHeaders") {
		t.Fatalf("NewClient with SignatureHeaders(7): %v, want an error naming Config.SignatureHeaders", err)
	}
}
