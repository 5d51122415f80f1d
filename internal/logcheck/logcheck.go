// Package logcheck keeps secrets out of hookd's logs, as the tests see them: the tests hand hookd
// a logger from New, which records every line, Debug included, and fails the test when one holds
// a secret, either a value the test made known (Secret) or anything shaped like one: a signing
// secret, a token, a Bearer credential, a sealed value, a password in a URL. Check does the same
// for logs read elsewhere, such as the stderr of a hookd process.
package logcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hookd/hookd"
)

// Log records the lines of a test's hookd logs, and checks them when the test ends.
type Log struct {
	handler slog.Handler

	mu      sync.Mutex
	text    strings.Builder
	secrets []string
}

// New returns a Log for t, checked when t ends: t fails if a line holds a secret. Call it before
// starting what logs, so that the check runs after what logs has stopped.
func New(t testing.TB) *Log {
	t.Helper()
	l := &Log{}
	l.handler = slog.NewTextHandler(recordWriter{l}, &slog.HandlerOptions{Level: slog.LevelDebug})
	t.Cleanup(func() {
		t.Helper()
		l.mu.Lock()
		text, secrets := l.text.String(), l.secrets
		l.mu.Unlock()
		Check(t, "the logs", text, secrets...)
	})
	return l
}

// Logger returns a logger that records every record, Debug included.
func (l *Log) Logger() *slog.Logger { return slog.New(l.handler) }

// LoggerTo is Logger that also writes the records at level and above to w, such as t.Output(),
// where a failed test's warnings can be read.
func (l *Log) LoggerTo(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewMultiHandler(l.handler, slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}

// Secret adds values that no line may hold: those a test made or read, which have no shape to
// find them by (a main key, a secret's key bytes, a token of a test's own format).
func (l *Log) Secret(values ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.secrets = append(l.secrets, values...)
}

// SecretsOf adds the signing keys of every endpoint in r as secrets, expired ones included. Call
// it as the test ends, before the store closes, to take in the secrets it made, whether or not
// the test read them. A sealed key (a main key) is added as stored: its plaintext, if the test
// knows it, is for Secret.
func (l *Log) SecretsOf(ctx context.Context, r hookd.Reader) error {
	for apps := (hookd.ListOptions{Limit: 250}); ; {
		page, err := r.ListApplications(ctx, apps)
		if err != nil {
			return fmt.Errorf("list applications: %w", err)
		}
		for _, app := range page.Data {
			for eps := (hookd.ListOptions{Limit: 250}); ; {
				epPage, err := r.ListEndpoints(ctx, app.ID, eps)
				if err != nil {
					return fmt.Errorf("list endpoints of %s: %w", app.ID, err)
				}
				for _, ep := range epPage.Data {
					keys, err := r.SigningKeys(ctx, ep.ID)
					if err != nil {
						return fmt.Errorf("signing keys of %s: %w", ep.ID, err)
					}
					for _, k := range keys {
						l.Secret(k.Secret)
					}
				}
				if epPage.Done {
					break
				}
				eps.Iterator = epPage.Iterator
			}
		}
		if page.Done {
			return nil
		}
		apps.Iterator = page.Iterator
	}
}

// SecretsAtCleanup registers a cleanup of t that adds the signing keys in r as secrets (see
// SecretsOf), logging, not failing, if it cannot read them all. Cleanups run last registered
// first, so the order of registration matters: register it after the cleanup that closes the
// store behind r, so that it reads r before r closes, and before starting the client that writes
// to r, so that it reads r after the client stops, once every key is in.
func (l *Log) SecretsAtCleanup(t testing.TB, r hookd.Reader) {
	t.Helper()
	t.Cleanup(func() {
		t.Helper()
		if err := l.SecretsOf(context.Background(), r); err != nil {
			t.Logf("the logs are checked for the secrets known so far only: %v", err)
		}
	})
}

// String returns the lines recorded so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// recordWriter appends a text handler's output, one whole line a Write, to its Log.
type recordWriter struct{ l *Log }

func (w recordWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.l.text.Write(p)
}

// Check fails t for each line of logs that holds one of secrets or a value shaped like a secret
// (see Leaks), the first few one by one; what names the logs in the failure.
func Check(t testing.TB, what, logs string, secrets ...string) {
	t.Helper()
	leaks := Leaks(logs, secrets...)
	for i, leak := range leaks {
		if i == maxReported {
			t.Errorf("%s: %d more lines hold a secret", what, len(leaks)-i)
			break
		}
		t.Errorf("%s: %s", what, leak)
	}
}

// maxReported is how many lines with a secret Check reports one by one.
const maxReported = 5

// shapes are the secrets found by their form, whoever made them.
var shapes = []struct {
	name string
	re   *regexp.Regexp
	// allow, when set, lets a match through: a redacted password.
	allow func(match []string) bool
}{
	{"a whsec_ signing secret", regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{16,}`), nil},
	{"a whsk_ private key", regexp.MustCompile(`whsk_[A-Za-z0-9+/=]{16,}`), nil},
	{"a hookd token", regexp.MustCompile(`hookd_(?:sk|app)_[A-Za-z0-9_-]{8,}`), nil},
	{"a Bearer credential", regexp.MustCompile(`(?i)\bbearer\s+[^\s"]{6,}`), nil},
	{"a sealed secret", regexp.MustCompile(`hookd:enc:v1:[A-Za-z0-9+/=_-]{16,}`), nil},
	{"a password in a URL", regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:"]*:([^\s/@"]+)@`),
		func(m []string) bool { return m[1] == "xxxxx" }}, // url.URL.Redacted's
}

// Leaks returns, for each line of logs that holds a secret, its number, the first secret it holds
// and the line. A secret is one of secrets (whole; for a whsec_ or whsk_ secret, its key's base64
// alone; URL-escaped; or the middle third of a long one, so that a cut or partly escaped copy
// counts too) or a value shaped like a secret. Secrets shorter than 8 bytes are too likely to
// occur by chance and are left out.
func Leaks(logs string, secrets ...string) []string {
	var whole, parts []needle
	seen := map[string]bool{}
	for i, s := range secrets {
		if len(s) < 8 || seen[s] {
			continue
		}
		seen[s] = true
		name := fmt.Sprintf("secret #%d (%s…)", i+1, s[:4])
		whole = append(whole, needle{name, s})
		for _, prefix := range []string{"whsec_", "whsk_"} {
			if key, ok := strings.CutPrefix(s, prefix); ok && len(key) >= 8 {
				whole = append(whole, needle{name + ", its key", key})
			}
		}
		escaped := url.QueryEscape(s)
		if escaped != s {
			whole = append(whole, needle{name + ", URL-escaped", escaped})
		}
		for _, n := range []string{s, escaped} {
			if len(n) >= 24 {
				parts = append(parts, needle{name + ", a part", n[len(n)/3 : 2*len(n)/3]})
			}
		}
	}
	needles := append(whole, parts...)
	var out []string
	for i, line := range strings.Split(logs, "\n") {
		if leak := lineLeak(line, needles); leak != "" {
			out = append(out, fmt.Sprintf("line %d holds %s: %s", i+1, leak, line))
		}
	}
	return out
}

// needle is a secret's text to look for, and what to call it.
type needle struct{ name, text string }

// lineLeak returns what secret line holds first, or "".
func lineLeak(line string, needles []needle) string {
	for _, n := range needles {
		if strings.Contains(line, n.text) {
			return n.name
		}
	}
	for _, s := range shapes {
		for _, m := range s.re.FindAllStringSubmatch(line, -1) {
			if s.allow == nil || !s.allow(m) {
				return s.name
			}
		}
	}
	return ""
}

// FileHolds reports whether the SQLite database at path, its write-ahead log included, holds s
// anywhere, in whatever table, row or page: a secret sealed at rest must not.
func FileHolds(t testing.TB, path, s string) bool {
	t.Helper()
	for _, p := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(s)) {
			return true
		}
	}
	return false
}
