package server

import (
	"context"
	"crypto/subtle"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
)

// testToken is the admin token of the test servers.
const testToken = "testsk_admin_token"

// staticAuth accepts testToken as admin and the tokens in apps as app-portal tokens.
type staticAuth struct{ apps map[string]string }

func (a staticAuth) Authenticate(_ context.Context, token string) (Principal, error) {
	if token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(testToken)) == 1 {
		return Principal{}, nil
	}
	if app, ok := a.apps[token]; ok {
		return Principal{AppID: app}, nil
	}
	return Principal{}, errUnauthorized
}

// bundle is a running API on a fresh SQLite file with a started client and a receiver.
type bundle struct {
	ctx    context.Context
	client *hookd.Client
	store  *sqlite.Store
	srv    *httptest.Server
	recv   *hookdtest.Receiver
	svix   *svix.Svix    // the official Go SDK v1.44.0, pointed at srv
	log    *logcheck.Log // the API's, the client's and the store's; checked for secrets at the end
}

// setup starts everything; auth nil means staticAuth with no app tokens.
func setup(t testing.TB, auth Authenticator) *bundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	log := logcheck.New(t) // first, so that it is checked once everything stopped
	log.Secret(testToken)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	recv := hookdtest.NewReceiver()
	t.Cleanup(func() { recv.Close(); store.Close() })
	log.SecretsAtCleanup(t, store) // after the client's Stop, before the store closes
	client, err := hookd.NewClient(store, &hookd.Config{
		Delivery: &delivery.Config{
			Timeout:      2 * time.Second,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond},
		Logger:        log.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		client.Stop(sctx)
	})
	if auth == nil {
		auth = staticAuth{}
	}
	if a, ok := auth.(staticAuth); ok {
		for token := range a.apps {
			log.Secret(token)
		}
	}
	api, err := New(client, &Config{Auth: auth, Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return &bundle{
		ctx: ctx, client: client, store: store, srv: srv, recv: recv,
		svix: svix.New(testToken, &svix.SvixOptions{ServerUrl: u, HTTPClient: &http.Client{Timeout: 10 * time.Second}}),
		log:  log,
	}
}

// do sends a raw request with the admin token (or token when set) and returns the response.
func (b *bundle) do(t *testing.T, method, path, body string, header ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(b.ctx, method, b.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
