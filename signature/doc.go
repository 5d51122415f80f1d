// Package signature signs and verifies webhooks.
//
// It speaks two schemes. The default is Standard Webhooks
// (https://www.standardwebhooks.com), which Svix also uses: three headers,
// webhook-id, webhook-timestamp and webhook-signature (or the same with the
// svix- prefix, see [Flavor]), and a signature over "id.timestamp.body" that is
// either "v1," and the base64 HMAC-SHA256 under a "whsec_" secret, or "v1a,"
// and the base64 ed25519 signature under a "whsk_" key, verified with its
// "whpk_" public half. The second is a Stripe-shaped scheme,
// "X-Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of t.body>", repeated
// as Stripe-Signature, for endpoints that already verify that shape, Stripe's
// libraries among them; see [StripeSigner].
//
// A sender builds a [Signer] from every key that is not yet expired, so the
// signature header carries one signature per key and receivers keep working
// while a secret is rotated. A receiver builds a [Verifier] from the keys it
// trusts; [Verifier.Verify] accepts a request when any signature matches any
// key and the timestamp is within [Verifier.Tolerance] of the clock.
//
// The package uses only the standard library, so a receiver can import it
// without pulling in the rest of hookd.
//
// Errors a caller may branch on are the ErrXxx sentinels; the returned errors
// wrap them with detail, so test them with [errors.Is].
package signature
