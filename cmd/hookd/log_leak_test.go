package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			for name, v := range map[string]string{"admin token": testAdminToken, "main key": mainKey, "endpoint secret": secret,
				"rotated secret": rotated, "portal token": appToken, "wrong token": "hookd_sk_wrong_token_1234"} {
				// The secrets' distinctive middles, so that a partial or escaped copy counts too.
				needle := v[len(v)/3 : 2*len(v)/3]
				if strings.Contains(logs, needle) {
					t.Errorf("the %s format's logs hold the %s", format, name)
				}
			}
			if !strings.Contains(logs, "/secret/rotate") {
				t.Errorf("the debug logs have no request lines to check:\n%s", logs)
			}
			t.Logf("%d bytes of %s logs checked", len(logs), format)
		})
	}
}
