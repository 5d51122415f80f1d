package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/internal/logcheck"
)

// TestLogsHoldNoSecret runs hookd serve with debug logs (text, then JSON) through everything that
// handles a secret or a token: the admin token, a main key, an endpoint created with its secret, a
// secret read and rotated, a portal token minted and used, a delivery signed, failed attempts, a
// request with a wrong token. Its whole log must hold none of them.
func TestLogsHoldNoSecret(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			const (
				mainKey = "vSD1iFxs6FyA2Z+r5qKnMhtcUeSUswmzmggEY9/Hmbs="
				secret  = "whsec_c2VjcmV0LWZvci10aGUtbG9nLWxlYWstdGVzdA=="
			)
			recv := newFleetReceiver()
			defer recv.srv.Close()
			s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "h.db"),
				"--token", testAdminToken, "--main-key", mainKey, "--allow-subnets", "127.0.0.0/8",
				"--retry-schedule", "50ms", "--log-level", "debug", "--log-format", format)
			mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"leak","uid":"leak"}`)
			ep := mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/leak/endpoint", testAdminToken,
				fmt.Sprintf(`{"url":"%s/ok","secret":"%s"}`, recv.srv.URL, secret))
			mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/leak/endpoint", testAdminToken,
				`{"url":"http://127.0.0.1:1/refused"}`)
			epID := ep["id"].(string)
			got := mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/leak/endpoint/"+epID+"/secret", testAdminToken, "")
			if got["key"] != secret {
				t.Fatalf("secret read back %v", got["key"])
			}
			mustCall(t, http.StatusNoContent, http.MethodPost, s.url+"/api/v1/app/leak/endpoint/"+epID+"/secret/rotate", testAdminToken, `{}`)
			rotated := mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/leak/endpoint/"+epID+"/secret", testAdminToken, "")["key"].(string)
			portal := mustCall(t, http.StatusOK, http.MethodPost, s.url+"/api/v1/auth/app-portal-access/leak", testAdminToken, `{}`)
			appToken := portal["token"].(string)
			mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/leak/endpoint", appToken, "")
			if resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(s.url + "/portal?token=" + appToken); err == nil {
				resp.Body.Close() // the portal link, token in its query
			}
			if code, _ := call(t, http.MethodGet, s.url+"/api/v1/app", "hookd_sk_wrong_token_1234", ""); code != http.StatusUnauthorized {
				t.Fatalf("a wrong token: %d", code)
			}
			mustCall(t, http.StatusAccepted, http.MethodPost, s.url+"/api/v1/app/leak/msg", testAdminToken, `{"eventType":"leak.test","payload":{"n":1}}`)
			deadline := time.Now().Add(10 * time.Second)
			for recv.requests.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // a retry of the refused endpoint, logged
			s.stop(t)
			logs := s.stderr.String()
			// The admin token and the main key, given as flags, are checked by startServe too.
			logcheck.Check(t, "the "+format+" logs", logs, testAdminToken, mainKey, secret, rotated, appToken, "hookd_sk_wrong_token_1234")
			if !strings.Contains(logs, "/secret/rotate") {
				t.Errorf("the debug logs have no request lines to check:\n%s", logs)
			}
			t.Logf("%d bytes of %s logs checked", len(logs), format)
		})
	}
}

// serveSecrets returns the secrets that hookd serve with args is given: the values of --token,
// --main-key, --operational-webhook-secret and --metrics-token or of their variables, and the passwords in the
// URLs of --db and --queue or of their variables.
func serveSecrets(args []string) []string {
	values := map[string][]string{
		"token":                      {os.Getenv("HOOKD_TOKEN")},
		"main-key":                   {os.Getenv("HOOKD_MAIN_KEY")},
		"operational-webhook-secret": {os.Getenv("HOOKD_OPERATIONAL_WEBHOOK_SECRET")},
		"metrics-token":              {os.Getenv("HOOKD_METRICS_TOKEN")},
		"db":                         {os.Getenv("HOOKD_DB"), os.Getenv("DATABASE_URL")},
		"queue":                      {os.Getenv("HOOKD_QUEUE"), os.Getenv("REDIS_URL")},
	}
	for i, a := range args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok && i+1 < len(args) {
			value = args[i+1]
		}
		if _, wanted := values[name]; wanted && strings.HasPrefix(a, "-") {
			values[name] = append(values[name], value)
		}
	}
	var out []string
	for name, vs := range values {
		for _, v := range vs {
			if name != "db" && name != "queue" {
				out = append(out, v)
			} else if u, err := url.Parse(v); err == nil {
				if pw, ok := u.User.Password(); ok {
					out = append(out, pw)
				}
			}
		}
	}
	return out
}

// checkServeLogs fails t if the stderr of a hookd serve holds one of secrets, the admin token it
// generated, or anything shaped like a secret (see package logcheck). The one line that shows a
// generated admin token is there to show it, and is left out.
func checkServeLogs(t testing.TB, what, stderr string, secrets []string) {
	t.Helper()
	if m := adminTokenRE.FindStringSubmatch(stderr); m != nil {
		secrets = append(secrets, m[1])
		stderr = strings.Replace(stderr, m[0], "(the generated admin token, shown once)", 1)
	}
	logcheck.Check(t, what, stderr, secrets...)
}
