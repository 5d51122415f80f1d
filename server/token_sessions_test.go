package server

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// testClock is a clock a test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sessionSetup is a TokenAuth on the bundle's store, on a clock the test moves, with an
// application "acme" and a portal token for it valid for two days.
func sessionSetup(t *testing.T) (*bundle, *TokenAuth, *testClock, string) {
	t.Helper()
	b := setup(t, nil)
	clock := &testClock{t: time.Now()}
	ta, _, err := NewTokenAuth(b.ctx, b.store, testToken, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	app, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	portal, err := ta.IssueAppToken(b.ctx, app.ID, 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(portal)
	return b, ta, clock, portal
}

func TestSessionSignsInAndOut(t *testing.T) {
	t.Parallel()
	b, ta, _, portal := sessionSetup(t)
	dash, p, err := ta.StartSession(b.ctx, testToken, DefaultSessionTTL)
	if err != nil || p.AppID != "" || !strings.HasPrefix(dash, sessionPrefix) {
		t.Fatalf("StartSession(admin) = %q, %+v, %v", dash, p, err)
	}
	b.log.Secret(dash)
	if p, err := ta.Session(b.ctx, dash); err != nil || p.AppID != "" {
		t.Fatalf("Session(dashboard) = %+v, %v", p, err)
	}
	// A session id is not a token, and a token is not a session id.
	if _, err := ta.Authenticate(b.ctx, dash); !errors.Is(err, errUnauthorized) {
		t.Errorf("Authenticate(session id) = %v; want errUnauthorized", err)
	}
	if _, err := ta.Session(b.ctx, testToken); !errors.Is(err, errUnauthorized) {
		t.Errorf("Session(admin token) = %v; want errUnauthorized", err)
	}
	if err := ta.EndSession(b.ctx, dash, true); err != nil {
		t.Fatal(err)
	}
	if _, err := ta.Session(b.ctx, dash); !errors.Is(err, errUnauthorized) {
		t.Errorf("Session after EndSession = %v; want errUnauthorized", err)
	}
	if _, err := ta.Authenticate(b.ctx, testToken); err != nil {
		t.Errorf("the admin token after a dashboard sign-out: %v; want it to work (never revoked)", err)
	}
	if err := ta.EndSession(b.ctx, dash, true); err != nil {
		t.Errorf("a second EndSession: %v; want nil", err)
	}

	// A portal sign-out with revokeToken ends the token, and every session opened with it.
	one, p, err := ta.StartSession(b.ctx, portal, DefaultSessionTTL)
	if err != nil || p.AppID == "" {
		t.Fatalf("StartSession(portal) = %+v, %v", p, err)
	}
	two, _, err := ta.StartSession(b.ctx, portal, DefaultSessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.EndSession(b.ctx, one, true); err != nil {
		t.Fatal(err)
	}
	for name, check := range map[string]error{
		"the session signed out": func() error { _, err := ta.Session(b.ctx, one); return err }(),
		"another of its token":   func() error { _, err := ta.Session(b.ctx, two); return err }(),
		"the token":              func() error { _, err := ta.Authenticate(b.ctx, portal); return err }(),
		"a new session":          func() error { _, _, err := ta.StartSession(b.ctx, portal, DefaultSessionTTL); return err }(),
	} {
		if !errors.Is(check, errUnauthorized) {
			t.Errorf("%s after a portal sign-out: %v; want errUnauthorized", name, check)
		}
	}
	if _, _, err := ta.StartSession(b.ctx, "nope", DefaultSessionTTL); !errors.Is(err, errUnauthorized) {
		t.Errorf("StartSession(unknown token) = %v; want errUnauthorized", err)
	}
}

// A session ends at its TTL, or at its token's expiry when that comes first; the admin token
// replaced ends the dashboard's sessions.
func TestSessionExpires(t *testing.T) {
	t.Parallel()
	b, ta, clock, _ := sessionSetup(t)
	app, err := b.client.GetApplication(b.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	hour, err := ta.IssueAppToken(b.ctx, app.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(hour)
	dash, _, err := ta.StartSession(b.ctx, testToken, DefaultSessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	portal, _, err := ta.StartSession(b.ctx, hour, DefaultSessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	clock.add(time.Hour - time.Second)
	if _, err := ta.Session(b.ctx, portal); err != nil {
		t.Fatalf("a second before its token expires: %v", err)
	}
	clock.add(time.Second + tokenCacheTTL)
	if _, err := ta.Session(b.ctx, portal); !errors.Is(err, errUnauthorized) {
		t.Errorf("once its token expired: %v; want errUnauthorized", err)
	}
	clock.add(DefaultSessionTTL - time.Hour - tokenCacheTTL - time.Second)
	if _, err := ta.Session(b.ctx, dash); err != nil {
		t.Fatalf("a second before its TTL: %v", err)
	}
	clock.add(time.Second)
	if _, err := ta.Session(b.ctx, dash); !errors.Is(err, errUnauthorized) {
		t.Errorf("at its TTL: %v; want errUnauthorized", err)
	}

	// A new admin token ends the sessions opened with the previous one.
	dash, _, err = ta.StartSession(b.ctx, testToken, DefaultSessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	clock.add(tokenCacheTTL)
	if _, _, err := NewTokenAuth(b.ctx, b.store, testToken+"_new", clock.now); err != nil {
		t.Fatal(err)
	}
	b.log.Secret(testToken + "_new")
	if _, err := ta.Session(b.ctx, dash); !errors.Is(err, errUnauthorized) {
		t.Errorf("after the admin token changed: %v; want errUnauthorized", err)
	}
}
