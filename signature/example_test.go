package signature_test

import (
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/hookd/hookd/signature"
)

// A sender signs a message; a receiver verifies it with the same secret. The
// timestamp and the receiver's clock are fixed here so the output is stable;
// in real use, sign with time.Now() and leave Now unset.
func Example() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // from signature.NewSecret()
	body := []byte(`{"test": 2432232314}`)
	sentAt := time.Unix(1614265330, 0)

	// Sender.
	signer, err := signature.NewSigner(secret)
	if err != nil {
		log.Fatal(err)
	}
	headers, err := signer.Headers(signature.FlavorWebhook, "msg_p5jXN8AQM9LWM0D4loKWxJek", sentAt, body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(signature.HeaderSignature+":", headers.Get(signature.HeaderSignature))

	// Receiver.
	verifier, err := signature.NewVerifier(secret)
	if err != nil {
		log.Fatal(err)
	}
	verifier.Now = func() time.Time { return sentAt.Add(30 * time.Second) }
	fmt.Println("verify:", verifier.Verify(body, headers))
	fmt.Println("tampered:", errors.Is(verifier.Verify([]byte(`{"test": 1}`), headers), signature.ErrNoMatch))

	verifier.Now = func() time.Time { return sentAt.Add(time.Hour) }
	fmt.Println("replayed an hour later:", errors.Is(verifier.Verify(body, headers), signature.ErrTooOld))
	// Output:
	// webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// verify: <nil>
	// tampered: true
	// replayed an hour later: true
}

// The Stripe-shaped scheme keys the HMAC with the secret string as written.
func ExampleStripeSigner() {
	signer, err := signature.NewStripeSigner("whsec_be28d358628ab90724cae3cf")
	if err != nil {
		log.Fatal(err)
	}
	sentAt := time.Unix(1700000000, 0)
	body := []byte(`{"type":"invitation.created"}`)
	headers := signer.Headers("invitation.created", sentAt, body)

	verifier, err := signature.NewStripeVerifier("whsec_be28d358628ab90724cae3cf")
	if err != nil {
		log.Fatal(err)
	}
	verifier.Now = func() time.Time { return sentAt }
	fmt.Println(headers.Get(signature.StripeHeaderEvent), headers.Get(signature.StripeHeaderTimestamp))
	fmt.Println("verify:", verifier.Verify(body, headers))
	// Output:
	// invitation.created 1700000000
	// verify: <nil>
}

// Ed25519 (v1a): the sender keeps the whsk_ secret, receivers get the whpk_
// public key.
func ExampleNewKeyPair() {
	secret, public, err := signature.NewKeyPair()
	if err != nil {
		log.Fatal(err)
	}
	signer, err := signature.NewSigner(secret)
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := signature.NewVerifier(public)
	if err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	headers, err := signer.Headers(signature.FlavorSvix, "msg_1", now, []byte("{}"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verify:", verifier.Verify([]byte("{}"), headers))
	// Output:
	// verify: <nil>
}
