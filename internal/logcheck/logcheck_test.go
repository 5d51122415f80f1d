package logcheck

import (
	"fmt"
	"strings"
	"testing"
)

func TestLeaks(t *testing.T) {
	t.Parallel()
	const (
		secret  = "whsec_c2VjcmV0LWZvci10aGUtbG9nLWxlYWstdGVzdA=="
		mainKey = "vSD1iFxs6FyA2Z+r5qKnMhtcUeSUswmzmggEY9/Hmbs="
	)
	tests := []struct {
		name string
		line string
		want string // in the one leak reported; "" for none
	}{
		{"a request line", `level=DEBUG msg=request method=POST path=/api/v1/app/a/endpoint/ep_1/secret/rotate status=204`, ""},
		{"a redacted URL", `level=INFO msg=start db=postgres://hookd:xxxxx@db:5432/hookd`, ""},
		{"a URL without a password", `level=INFO msg=start db=postgres://hookd@db:5432/hookd`, ""},
		{"a short registered value", `level=INFO msg="endpoint ep_1 disabled"`, ""},
		{"a public key", `level=INFO key=whpk_MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=`, ""},
		{"a registered secret", `level=ERROR error="bad key ` + secret + `"`, "secret #1"},
		{"its key alone", `level=ERROR key=c2VjcmV0LWZvci10aGUtbG9nLWxlYWstdGVzdA==`, "secret #1 (whse…), its key"},
		{"a third of a main key", `level=ERROR got=` + mainKey[12:32], "secret #2 (vSD1…), a part"},
		{"a URL-escaped main key", `level=DEBUG q=key%3D` + strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(mainKey), "secret #2 (vSD1…), URL-escaped"},
		{"an unregistered signing secret", `msg=x secret=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`, "a whsec_ signing secret"},
		{"a private key", `msg=x k=whsk_MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC`, "a whsk_ private key"},
		{"an admin token", `msg=x token=hookd_sk_4MZ0nXhFdKqj-9Wz`, "a hookd token"},
		{"an app token", `msg=x token=hookd_app_4MZ0nXhFdKqj`, "a hookd token"},
		{"an Authorization header", `msg=x header="Authorization: Bearer testsk_admin"`, "a Bearer credential"},
		{"a sealed value", `msg=x value=hookd:enc:v1:AAECAwQFBgcICQoLDA0ODw==`, "a sealed secret"},
		{"a password in a URL", `msg=x url=redis://:hunter2@127.0.0.1:6379/0`, "a password in a URL"},
	}
	for _, tt := range tests {
		got := Leaks("level=INFO msg=before\n"+tt.line+"\n", secret, mainKey, "ep_1")
		switch {
		case tt.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want no leak", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.HasPrefix(got[0], "line 2 holds ")):
			t.Errorf("%s: %q, want one leak in line 2 that names %q", tt.name, got, tt.want)
		}
	}
}

// fakeT is a test whose failures and cleanups are kept, not acted on.
type fakeT struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (f *fakeT) Helper()           {}
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// A Log fails its test when the test ends if a record held a secret: a registered one in an
// attribute of a group, or one of a known shape.
func TestLogFailsItsTest(t *testing.T) {
	t.Parallel()
	f := &fakeT{TB: t}
	l := New(f)
	l.Secret("main-key-of-the-test")
	l.Logger().Debug("fine", "endpoint", "ep_1")
	l.Logger().WithGroup("req").Debug("header", "key", "main-key-of-the-test")
	var echoed strings.Builder
	l.LoggerTo(&echoed, 0).Warn("retrying", "auth", "Bearer abcdefgh")
	l.Logger().Info("after")
	f.end()
	if len(f.errors) != 2 || !strings.Contains(f.errors[0], `line 2 holds secret #1`) || !strings.Contains(f.errors[1], "a Bearer credential") {
		t.Errorf("failures %q, want the secret in line 2 and the credential in line 3", f.errors)
	}
	if !strings.Contains(echoed.String(), "retrying") || strings.Count(l.String(), "\n") != 4 {
		t.Errorf("echoed %q, recorded %q", echoed.String(), l.String())
	}
}

// SecretsAtCleanup only registers a cleanup: it reads nothing until t ends (a nil reader would
// panic if it did).
func TestSecretsAtCleanupWaitsForTheEnd(t *testing.T) {
	t.Parallel()
	f := &fakeT{TB: t}
	l := New(f)
	l.SecretsAtCleanup(f, nil)
	if len(f.cleanups) != 2 {
		t.Errorf("%d cleanups, want New's and SecretsAtCleanup's", len(f.cleanups))
	}
}
