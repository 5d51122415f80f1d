package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd/signature"
)

// maxVerifyBody bounds what "hookd verify" reads from stdin.
const maxVerifyBody = 64 << 20

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

const verifyUsage = `verify --secret S [--secret S2] --id ID --timestamp T [--signature SIG] < body
       hookd verify --scheme stripe --secret S --signature "t=...,v1=..." < body

Checks a webhook signature against the body read from stdin, byte for byte.
Standard Webhooks (the default): give the webhook-id, webhook-timestamp and
webhook-signature header values. Without --signature it prints the signature
header a sender holding the secret would send, so you can compare by hand.
The Stripe-shaped scheme (--scheme stripe) takes the X-Webhook-Signature value
(the same as Stripe-Signature).`

// runVerify handles "hookd verify".
func runVerify(_ context.Context, e *env, args []string) error {
	f := newFlags(e, "verify", verifyUsage)
	var secrets stringList
	f.Var(&secrets, "secret", "signing secret: whsec_ (HMAC), whpk_ or whsk_ (ed25519); repeat for several keys")
	scheme := f.String("scheme", "standard", `signature scheme: "standard" (webhook-signature) or "stripe" (X-Webhook-Signature)`)
	id := f.String("id", "", "the webhook-id header value (standard scheme)")
	ts := f.String("timestamp", "", "the webhook-timestamp header value, Unix seconds (standard scheme)")
	sig := f.String("signature", "", "the signature header value; omit (standard scheme) to print the expected one")
	tolerance := f.Duration("tolerance", signature.DefaultTolerance, "how far the timestamp may be from now, either way; 0 checks the signature alone")
	if err := f.parse(args); err != nil {
		return err
	}
	hint := `run "hookd verify --help" for the flags`
	if len(secrets) == 0 {
		return usageErrorf(hint, "verify: --secret is required")
	}
	tol := *tolerance
	if tol == 0 {
		tol = -1 // the signature package's "no timestamp check"
	}
	switch *scheme {
	case "standard":
		return verifyStandard(e, secrets, *id, *ts, *sig, tol)
	case "stripe":
		return verifyStripe(e, secrets, *id, *ts, *sig, tol)
	default:
		return usageErrorf(`use --scheme standard or --scheme stripe`, "verify: unknown --scheme %q", *scheme)
	}
}

func readBody(e *env) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(e.stdin, maxVerifyBody+1))
	if err != nil {
		return nil, failf("", "verify: read the body from stdin: %v", err)
	}
	if len(body) > maxVerifyBody {
		return nil, usageErrorf("", "verify: the body on stdin is larger than %d MiB", maxVerifyBody>>20)
	}
	return body, nil
}

func verifyStandard(e *env, secrets []string, id, ts, sig string, tol time.Duration) error {
	hint := `run "hookd verify --help" for the flags`
	if id == "" || ts == "" {
		return usageErrorf(hint, "verify: --id and --timestamp are required with the standard scheme (the webhook-id and webhook-timestamp headers)")
	}
	body, err := readBody(e)
	if err != nil {
		return err
	}
	if sig == "" {
		return printExpected(e, secrets, id, ts, body)
	}
	v, err := signature.NewVerifier(secrets...)
	if err != nil {
		return usageErrorf(`pass the endpoint's whsec_ secret (or a whpk_ public key); "hookd secret new" makes one`, "verify: %v", err)
	}
	v.Tolerance = tol
	return verdict(e, v.VerifyParts(id, ts, sig, body))
}

func verifyStripe(e *env, secrets []string, id, ts, sig string, tol time.Duration) error {
	if id != "" || ts != "" {
		return usageErrorf(`the stripe scheme carries its timestamp inside --signature "t=...,v1=..."`, "verify: --id and --timestamp do not apply to --scheme stripe")
	}
	if sig == "" {
		return usageErrorf(`pass the X-Webhook-Signature header value, e.g. --signature "t=1700000000,v1=5257a8..."`, "verify: --signature is required with --scheme stripe")
	}
	body, err := readBody(e)
	if err != nil {
		return err
	}
	v, err := signature.NewStripeVerifier(secrets...)
	if err != nil {
		return usageErrorf(`pass the endpoint's secret exactly as it was shown`, "verify: %v", err)
	}
	v.Tolerance = tol
	return verdict(e, v.VerifyHeader(sig, body))
}

// printExpected prints the signature header a sender holding the secrets would send.
func printExpected(e *env, secrets []string, id, ts string, body []byte) error {
	s, err := signature.NewSigner(secrets...)
	if err != nil {
		return usageErrorf(`to print the expected signature pass a whsec_ or whsk_ secret (a whpk_ public key can only verify)`, "verify: %v", err)
	}
	sec, err := parseUnix(ts)
	if err != nil {
		return usageErrorf(`--timestamp is the webhook-timestamp header: whole seconds since 1970, e.g. 1700000000`, "verify: %v", err)
	}
	header, err := s.Sign(id, time.Unix(sec, 0), body)
	if err != nil {
		return usageErrorf(`--id is the webhook-id header value, e.g. msg_2bQ1...`, "verify: %v", err)
	}
	fmt.Fprintln(e.stdout, header)
	return nil
}

func parseUnix(s string) (int64, error) {
	n, err := strconv.ParseUint(s, 10, 62)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q is not Unix seconds", s)
	}
	return int64(n), nil
}

// verdict turns a verification error into the command's answer.
func verdict(e *env, err error) error {
	if err == nil {
		fmt.Fprintln(e.stdout, "valid: the signature matches")
		return nil
	}
	var hint string
	switch {
	case errors.Is(err, signature.ErrTooOld), errors.Is(err, signature.ErrTooNew):
		hint = "the timestamp is outside the tolerance; to check the signature alone pass --tolerance 0"
	case errors.Is(err, signature.ErrNoMatch):
		hint = "check the secret, and that stdin holds the body byte for byte (echo adds a newline: use printf '%s' or a file)"
	case errors.Is(err, signature.ErrMalformedHeader), errors.Is(err, signature.ErrMissingHeader):
		hint = `the standard signature looks like "v1,<base64>", several separated by spaces; the stripe one "t=<unix>,v1=<hex>"`
	case errors.Is(err, signature.ErrInvalidSecret):
		return usageErrorf(`"hookd secret new" makes a valid secret`, "verify: %v", err)
	}
	return failf(hint, "invalid: %v", err)
}
