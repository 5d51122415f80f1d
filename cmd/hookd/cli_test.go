package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// result is what one hookd invocation printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestSecretNew(t *testing.T) {
	t.Parallel()
	r := run(t, "", "secret", "new")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	secret := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q lacks whsec_", secret)
	}
	// The official library accepts it as a key.
	if _, err := standardwebhooks.NewWebhook(secret); err != nil {
		t.Fatalf("official library rejects %q: %v", secret, err)
	}
	if again := strings.TrimSpace(run(t, "", "secret", "new").stdout); again == secret {
		t.Fatal("two secrets are equal")
	}
}

func TestSecretNewEd25519JSON(t *testing.T) {
	t.Parallel()
	r := run(t, "", "secret", "new", "--ed25519", "--json")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var pair map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &pair); err != nil {
		t.Fatalf("output %q: %v", r.stdout, err)
	}
	if !strings.HasPrefix(pair["secret"], "whsk_") || !strings.HasPrefix(pair["public"], "whpk_") {
		t.Fatalf("pair = %v", pair)
	}
	// Sign with the secret key, verify with the public one.
	body := `{"type":"invoice.paid"}`
	now := strconv.FormatInt(time.Now().Unix(), 10)
	sig := run(t, body, "verify", "--secret", pair["secret"], "--id", "msg_1", "--timestamp", now)
	if sig.code != exitOK || !strings.HasPrefix(sig.stdout, "v1a,") {
		t.Fatalf("expected signature: exit %d, %q %q", sig.code, sig.stdout, sig.stderr)
	}
	v := run(t, body, "verify", "--secret", pair["public"], "--id", "msg_1", "--timestamp", now, "--signature", strings.TrimSpace(sig.stdout))
	if v.code != exitOK {
		t.Fatalf("verify with public key: exit %d, %q", v.code, v.stderr)
	}
}

func TestSecretUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"secret"}, {"secret", "old"}, {"secret", "new", "--bogus"}, {"secret", "new", "extra"}} {
		r := run(t, "", args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "hint:") {
			t.Errorf("%v: exit %d, stderr %q; want %d with a hint", args, r.code, r.stderr, exitUsage)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	t.Parallel()
	secret := strings.TrimSpace(run(t, "", "secret", "new").stdout)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"type":"invoice.paid","data":{"id":"in_1"}}`
	now := time.Now()
	sig, err := wh.Sign("msg_2x", now, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	old := strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)
	oldSig, _ := wh.Sign("msg_2x", now.Add(-time.Hour), []byte(body))
	other := strings.TrimSpace(run(t, "", "secret", "new").stdout)

	tests := []struct {
		name   string
		body   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"valid", body, []string{"--secret", secret, "--id", "msg_2x", "--timestamp", ts, "--signature", sig}, exitOK, "valid", ""},
		{"rotation: second key matches", body, []string{"--secret", other, "--secret", secret, "--id", "msg_2x", "--timestamp", ts, "--signature", sig}, exitOK, "valid", ""},
		{"tampered body", body + " ", []string{"--secret", secret, "--id", "msg_2x", "--timestamp", ts, "--signature", sig}, exitFailure, "", "echo adds a newline"},
		{"wrong secret", body, []string{"--secret", other, "--id", "msg_2x", "--timestamp", ts, "--signature", sig}, exitFailure, "", "invalid:"},
		{"other id", body, []string{"--secret", secret, "--id", "msg_3x", "--timestamp", ts, "--signature", sig}, exitFailure, "", "invalid:"},
		{"too old", body, []string{"--secret", secret, "--id", "msg_2x", "--timestamp", old, "--signature", oldSig}, exitFailure, "", "--tolerance 0"},
		{"too old, tolerance off", body, []string{"--secret", secret, "--id", "msg_2x", "--timestamp", old, "--signature", oldSig, "--tolerance", "0"}, exitOK, "valid", ""},
		{"malformed signature", body, []string{"--secret", secret, "--id", "msg_2x", "--timestamp", ts, "--signature", "garbage"}, exitFailure, "", "invalid:"},
		{"bad secret", body, []string{"--secret", "whsec_short", "--id", "msg_2x", "--timestamp", ts, "--signature", sig}, exitUsage, "", "hookd secret new"},
		{"no secret", body, []string{"--id", "msg_2x", "--timestamp", ts, "--signature", sig}, exitUsage, "", "--secret is required"},
		{"no id", body, []string{"--secret", secret, "--timestamp", ts, "--signature", sig}, exitUsage, "", "--id and --timestamp"},
		{"print expected", body, []string{"--secret", secret, "--id", "msg_2x", "--timestamp", ts}, exitOK, sig, ""},
		{"print expected, bad timestamp", body, []string{"--secret", secret, "--id", "msg_2x", "--timestamp", "soon"}, exitUsage, "", "seconds since 1970"},
		{"unknown scheme", body, []string{"--scheme", "md5", "--secret", secret}, exitUsage, "", "--scheme standard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.body, append([]string{"verify"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout ~%q, stderr ~%q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// stripeHeader signs as a Stripe-style receiver (t=TS,v1=HMAC of "TS.body") expects, independently of
// package signature.
func stripeHeader(secret string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "." + body))
	return "t=" + strconv.FormatInt(ts, 10) + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

func TestVerifyStripe(t *testing.T) {
	t.Parallel()
	secret := strings.TrimSpace(run(t, "", "secret", "new").stdout)
	body := `{"id":"evt_1","type":"invitation.created"}`
	now := time.Now().Unix()
	good := stripeHeader(secret, now, body)
	tests := []struct {
		name   string
		body   string
		args   []string
		code   int
		stderr string
	}{
		{"valid", body, []string{"--signature", good}, exitOK, ""},
		{"tampered", body + "x", []string{"--signature", good}, exitFailure, "invalid:"},
		{"old", body, []string{"--signature", stripeHeader(secret, now-3600, body)}, exitFailure, "--tolerance 0"},
		{"no signature", body, nil, exitUsage, "--signature is required"},
		{"id given", body, []string{"--signature", good, "--id", "x"}, exitUsage, "do not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"verify", "--scheme", "stripe", "--secret", secret}, tt.args...)
			r := run(t, tt.body, args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stderr ~%q", r.code, r.stdout, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	if r := run(t, ""); r.code != exitUsage || !strings.Contains(r.stdout, "Exit codes") {
		t.Fatalf("no args: exit %d, %q", r.code, r.stdout)
	}
	if r := run(t, "", "--help"); r.code != exitOK || !strings.Contains(r.stdout, "verify") {
		t.Fatalf("--help: exit %d, %q", r.code, r.stdout)
	}
	if r := run(t, "", "verify", "--help"); r.code != exitOK || !strings.Contains(r.stdout, "-tolerance") {
		t.Fatalf("verify --help: exit %d, %q", r.code, r.stdout)
	}
	if r := run(t, "", "frobnicate"); r.code != exitUsage || !strings.Contains(r.stderr, "unknown command") {
		t.Fatalf("unknown: exit %d, %q", r.code, r.stderr)
	}
}
