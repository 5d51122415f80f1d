// Command vectorgen writes testdata/vectors.json with code independent of
// package signature: the official Standard Webhooks Go library for v1, and
// openssl for v1a (ed25519) and the Stripe-shaped hex HMAC. Run it from the
// module root:
//
//	go run ./signature/testdata/vectorgen > signature/testdata/vectors.json
//
// The go tool skips testdata directories, so it is never part of a build.
package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

type vector struct {
	Name          string   `json:"name"`
	Scheme        string   `json:"scheme"`
	Source        string   `json:"source"`
	SignSecrets   []string `json:"sign_secrets,omitempty"`
	SignError     string   `json:"sign_error,omitempty"`
	VerifySecrets []string `json:"verify_secrets"`
	ID            string   `json:"id,omitempty"`
	Timestamp     int64    `json:"timestamp"`
	Now           int64    `json:"now"`
	Body          string   `json:"body"`
	Signature     string   `json:"signature"`
	Error         string   `json:"error,omitempty"`
}

const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = 1614265330
	specBody   = `{"test": 2432232314}`
	secretB    = "whsec_W0V8K5GNYl1Pyd0V440zAn3Um4l5BZ6j1Yu9MK27T0M="
	secret64   = "whsec_GBiWwoH+eqZck94vbFnZm/e8A8UKzF6xWcAu6fpgAL9PQRu3adPIWZ4MwHvav4YmpLfzsMNT+2DqcTnqguMHPQ=="
	secretC    = "whsec_npNxS1ViQHOZbW21zpBQv0wipRIQXmvv"
	// RFC 8032 section 7.1, test 1.
	edSeed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	edPub  = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
	// RFC 8032 section 7.1, test 2.
	edSeed2 = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"
	edPub2  = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"

	stripeSecret  = "whsec_be28d358628ab90724cae3cf"
	stripeSecret2 = "whsec_5f1c0a3e9b7d2468ace13579bdf02468"
	stripeTS      = 1700000000
	stripeBody    = `{"id":"evt_1700000000_invitation.created","type":"invitation.created","occurredAt":"2023-11-14T22:13:20.000Z","data":{"organizationId":"org:42"}}`
	v1Body        = `{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"1f81eb52-5198-4599-803e-771906343485"}}`
	v1ID          = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
	v1TS          = 1674087231
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func official(secret, id string, ts int64, body string) string {
	wh := must(standardwebhooks.NewWebhook(secret))
	return must(wh.Sign(id, time.Unix(ts, 0), []byte(body)))
}

func b64hex(h string) string { return base64.StdEncoding.EncodeToString(must(hex.DecodeString(h))) }

// opensslEd25519 signs msg with the seed using openssl pkeyutl.
func opensslEd25519(seed, msg string) string {
	der := "302e020100300506032b657004220420" + seed // PKCS#8 wrapper of an ed25519 seed
	dir := must(os.MkdirTemp("", "vec"))
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/key.der", must(hex.DecodeString(der)), 0o600)
	os.WriteFile(dir+"/msg", []byte(msg), 0o600)
	out := must(exec.Command("openssl", "pkeyutl", "-sign", "-rawin", "-keyform", "DER", "-inkey", dir+"/key.der", "-in", dir+"/msg").Output())
	if len(out) != 64 {
		panic(fmt.Sprint("ed25519 signature of ", len(out), " bytes"))
	}
	return "v1a," + base64.StdEncoding.EncodeToString(out)
}

// opensslHMAC returns the hex HMAC-SHA256 of msg under key, by openssl dgst.
func opensslHMAC(key, msg string) string {
	cmd := exec.Command("openssl", "dgst", "-sha256", "-hmac", key, "-r")
	cmd.Stdin = strings.NewReader(msg)
	out := string(must(cmd.Output()))
	return strings.Fields(out)[0]
}

func main() {
	spec := official(specSecret, specID, specTS, specBody)
	if spec != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		panic("official library disagrees with the specification: " + spec)
	}
	edSecret := "whsk_" + b64hex(edSeed+edPub)
	edPublic := "whpk_" + b64hex(edPub)
	edPublic2 := "whpk_" + b64hex(edPub2)
	edSecret2 := "whsk_" + b64hex(edSeed2+edPub2)
	msg := func(id string, ts int64, body string) string { return fmt.Sprintf("%s.%d.%s", id, ts, body) }
	v1a := opensslEd25519(edSeed, msg(v1ID, v1TS, v1Body))
	v1aSpec := opensslEd25519(edSeed, msg(specID, specTS, specBody))
	v1a2 := opensslEd25519(edSeed2, msg(v1ID, v1TS, v1Body))
	rotA := official(specSecret, v1ID, v1TS, v1Body)
	rotB := official(secretB, v1ID, v1TS, v1Body)
	stripe := opensslHMAC(stripeSecret, fmt.Sprintf("%d.%s", stripeTS, stripeBody))
	stripe2 := opensslHMAC(stripeSecret2, fmt.Sprintf("%d.%s", stripeTS, stripeBody))
	const srcOfficial = "standardwebhooks Go library v0.0.1, Webhook.Sign"
	const srcSpec = "Standard Webhooks specification example; standardwebhooks Go library v0.0.1 agrees"
	const srcEd = "openssl 3 pkeyutl -sign -rawin, RFC 8032 test key"
	const srcHMAC = "openssl 3 dgst -sha256 -hmac"
	stripeHeader := "t=1700000000,v1=" + stripe
	vs := []vector{
		{Name: "spec example v1", Scheme: "standard", Source: srcSpec, SignSecrets: []string{specSecret}, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: spec},
		{Name: "spec example v1, secret without prefix", Scheme: "standard", Source: srcSpec, SignSecrets: []string{strings.TrimPrefix(specSecret, "whsec_")}, VerifySecrets: []string{strings.TrimPrefix(specSecret, "whsec_")},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: spec},
		{Name: "v1, 64-byte secret", Scheme: "standard", Source: srcOfficial, SignSecrets: []string{secret64}, VerifySecrets: []string{secret64},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: official(secret64, v1ID, v1TS, v1Body)},
		{Name: "v1, empty body", Scheme: "standard", Source: srcOfficial, SignSecrets: []string{secretC}, VerifySecrets: []string{secretC},
			ID: "org:42-order:1001", Timestamp: v1TS, Now: v1TS, Body: "", Signature: official(secretC, "org:42-order:1001", v1TS, "")},
		{Name: "v1a, ed25519", Scheme: "standard", Source: srcEd, SignSecrets: []string{edSecret}, VerifySecrets: []string{edPublic},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: v1a},
		{Name: "v1a, verified with the secret key", Scheme: "standard", Source: srcEd, SignSecrets: []string{edSecret}, VerifySecrets: []string{edSecret},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: v1aSpec},
		{Name: "rotation, two v1, verifier holds the old", Scheme: "standard", Source: srcOfficial, SignSecrets: []string{specSecret, secretB}, VerifySecrets: []string{specSecret},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: rotA + " " + rotB},
		{Name: "rotation, two v1, verifier holds the new", Scheme: "standard", Source: srcOfficial, SignSecrets: []string{specSecret, secretB}, VerifySecrets: []string{secretB},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: rotA + " " + rotB},
		{Name: "rotation, two v1, verifier holds neither", Scheme: "standard", Source: srcOfficial, VerifySecrets: []string{secretC},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: rotA + " " + rotB, Error: "ErrNoMatch"},
		{Name: "rotation, v1 then v1a, verifier holds the public key", Scheme: "standard", Source: srcOfficial + "; " + srcEd, SignSecrets: []string{specSecret, edSecret}, VerifySecrets: []string{edPublic},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: rotA + " " + v1a},
		{Name: "rotation, two v1a", Scheme: "standard", Source: srcEd, SignSecrets: []string{edSecret, edSecret2}, VerifySecrets: []string{edPublic2},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: v1a + " " + v1a2},
		{Name: "unknown version before a good one", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: "v2,Zm9vYmFy " + spec},
		{Name: "unknown version only", Scheme: "standard", Source: "hand-written: no valid signature", VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: "v2," + strings.TrimPrefix(spec, "v1,"), Error: "ErrNoMatch"},
		{Name: "tolerance edge, 5 minutes old", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS + 300, Body: specBody, Signature: spec},
		{Name: "tolerance edge, 5 minutes ahead", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS - 300, Body: specBody, Signature: spec},
		{Name: "negative: tampered body", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS, Body: `{"test": 2432232315}`, Signature: spec, Error: "ErrNoMatch"},
		{Name: "negative: tampered id", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID + "x", Timestamp: specTS, Now: specTS, Body: specBody, Signature: spec, Error: "ErrNoMatch"},
		{Name: "negative: tampered timestamp", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS + 1, Now: specTS, Body: specBody, Signature: spec, Error: "ErrNoMatch"},
		{Name: "negative: wrong key", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{secretB},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: spec, Error: "ErrNoMatch"},
		{Name: "negative: v1a, wrong public key", Scheme: "standard", Source: srcEd, VerifySecrets: []string{edPublic2},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body, Signature: v1a, Error: "ErrNoMatch"},
		{Name: "negative: v1a, tampered body", Scheme: "standard", Source: srcEd, VerifySecrets: []string{edPublic},
			ID: v1ID, Timestamp: v1TS, Now: v1TS, Body: v1Body + " ", Signature: v1a, Error: "ErrNoMatch"},
		{Name: "negative: v1 signature, only an ed25519 key", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{edPublic},
			ID: specID, Timestamp: specTS, Now: specTS, Body: specBody, Signature: spec, Error: "ErrNoMatch"},
		{Name: "negative: too old", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS + 301, Body: specBody, Signature: spec, Error: "ErrTooOld"},
		{Name: "negative: too new", Scheme: "standard", Source: srcSpec, VerifySecrets: []string{specSecret},
			ID: specID, Timestamp: specTS, Now: specTS - 301, Body: specBody, Signature: spec, Error: "ErrTooNew"},
		{Name: "negative: '.' in id", Scheme: "standard", Source: srcOfficial + " (which signs it; the specification forbids it)", SignSecrets: []string{specSecret}, SignError: "ErrInvalidID", VerifySecrets: []string{specSecret},
			ID: "msg_1.1614265330", Timestamp: specTS, Now: specTS, Body: specBody, Signature: official(specSecret, "msg_1.1614265330", specTS, specBody), Error: "ErrMalformedHeader"},
		{Name: "stripe", Scheme: "stripe", Source: srcHMAC, SignSecrets: []string{stripeSecret}, VerifySecrets: []string{stripeSecret},
			Timestamp: stripeTS, Now: stripeTS, Body: stripeBody, Signature: stripeHeader},
		{Name: "stripe, rotation, verifier holds the new", Scheme: "stripe", Source: srcHMAC, SignSecrets: []string{stripeSecret, stripeSecret2}, VerifySecrets: []string{stripeSecret2},
			Timestamp: stripeTS, Now: stripeTS, Body: stripeBody, Signature: stripeHeader + ",v1=" + stripe2},
		{Name: "stripe, unknown scheme skipped", Scheme: "stripe", Source: srcHMAC, VerifySecrets: []string{stripeSecret},
			Timestamp: stripeTS, Now: stripeTS, Body: stripeBody, Signature: "t=1700000000,v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39,v1=" + stripe},
		{Name: "negative: stripe, tampered body", Scheme: "stripe", Source: srcHMAC, VerifySecrets: []string{stripeSecret},
			Timestamp: stripeTS, Now: stripeTS, Body: stripeBody[:len(stripeBody)-1], Signature: stripeHeader, Error: "ErrNoMatch"},
		{Name: "negative: stripe, base64-decoded key", Scheme: "stripe", Source: srcHMAC, VerifySecrets: []string{strings.TrimPrefix(stripeSecret, "whsec_")},
			Timestamp: stripeTS, Now: stripeTS, Body: stripeBody, Signature: stripeHeader, Error: "ErrNoMatch"},
		{Name: "negative: stripe, too old", Scheme: "stripe", Source: srcHMAC, VerifySecrets: []string{stripeSecret},
			Timestamp: stripeTS, Now: stripeTS + 301, Body: stripeBody, Signature: stripeHeader, Error: "ErrTooOld"},
		{Name: "negative: stripe, too new", Scheme: "stripe", Source: srcHMAC, VerifySecrets: []string{stripeSecret},
			Timestamp: stripeTS, Now: stripeTS - 301, Body: stripeBody, Signature: stripeHeader, Error: "ErrTooNew"},
		{Name: "negative: stripe, no t=", Scheme: "stripe", Source: srcHMAC, VerifySecrets: []string{stripeSecret},
			Timestamp: stripeTS, Now: stripeTS, Body: stripeBody, Signature: "v1=" + stripe, Error: "ErrMalformedHeader"},
	}
	out := struct {
		Comment string   `json:"comment"`
		Vectors []vector `json:"vectors"`
	}{
		Comment: "Signature vectors for package signature, computed once by code independent of it (see each source): the official Standard Webhooks Go library for v1, openssl for v1a and the Stripe-shaped scheme. For 'standard', signature is the webhook-signature value over id.timestamp.body; for 'stripe', the X-Webhook-Signature value over timestamp.body, keyed by the secret string as written. now is the verifier's clock; error names the sentinel expected from verifying, sign_error from signing.",
		Vectors: vs,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
