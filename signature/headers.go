package signature

import (
	"fmt"
	"net/textproto"
	"strconv"
)

// Header names.
const (
	// HeaderID carries the message id (Standard Webhooks).
	HeaderID = "webhook-id"
	// HeaderTimestamp carries the attempt's Unix time in seconds (Standard Webhooks).
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature carries the space-separated signatures (Standard Webhooks).
	HeaderSignature = "webhook-signature"

	// SvixHeaderID is HeaderID under Svix's name.
	SvixHeaderID = "svix-id"
	// SvixHeaderTimestamp is HeaderTimestamp under Svix's name.
	SvixHeaderTimestamp = "svix-timestamp"
	// SvixHeaderSignature is HeaderSignature under Svix's name.
	SvixHeaderSignature = "svix-signature"

	// StripeHeaderSignature carries "t=<unix>,v1=<hex>" (the Stripe-shaped scheme).
	StripeHeaderSignature = "X-Webhook-Signature"
	// StripeHeaderEvent carries the event type (the Stripe-shaped scheme).
	StripeHeaderEvent = "X-Webhook-Event"
	// StripeHeaderStripe repeats StripeHeaderSignature under the name Stripe's
	// own receivers read, so that a receiver written for Stripe hands it to
	// stripe.webhooks.constructEvent (or webhook.ConstructEvent) unchanged.
	StripeHeaderStripe = "Stripe-Signature"
	// StripeHeaderTimestamp repeats the signed Unix time (the Stripe-shaped
	// scheme); verifiers read the time from StripeHeaderSignature instead.
	StripeHeaderTimestamp = "X-Webhook-Timestamp"
)

// Flavor picks the header names of the Standard Webhooks scheme. The
// signatures are the same in every flavor.
type Flavor int

const (
	// FlavorWebhook names the headers webhook-id, webhook-timestamp and
	// webhook-signature, as the specification does. It is the default.
	FlavorWebhook Flavor = iota
	// FlavorSvix names the headers svix-id, svix-timestamp and svix-signature,
	// for receivers written against Svix's libraries.
	FlavorSvix
)

// String returns "webhook" or "svix", the names ParseFlavor accepts.
func (f Flavor) String() string {
	switch f {
	case FlavorWebhook:
		return "webhook"
	case FlavorSvix:
		return "svix"
	}
	return "Flavor(" + strconv.Itoa(int(f)) + ")"
}

// ParseFlavor returns the flavor named s: "webhook" or "svix".
func ParseFlavor(s string) (Flavor, error) {
	switch s {
	case "webhook":
		return FlavorWebhook, nil
	case "svix":
		return FlavorSvix, nil
	}
	return 0, fmt.Errorf("unknown signature flavor %q: want \"webhook\" or \"svix\"", s)
}

// headerNames holds the names of one flavor's headers: as written in errors,
// and canonical, as the keys of an http.Header.
type headerNames struct {
	id, timestamp, signature          string
	idKey, timestampKey, signatureKey string
}

func newHeaderNames(id, timestamp, signature string) headerNames {
	return headerNames{
		id: id, timestamp: timestamp, signature: signature,
		idKey:        textproto.CanonicalMIMEHeaderKey(id),
		timestampKey: textproto.CanonicalMIMEHeaderKey(timestamp),
		signatureKey: textproto.CanonicalMIMEHeaderKey(signature),
	}
}

var (
	webhookNames       = newHeaderNames(HeaderID, HeaderTimestamp, HeaderSignature)
	svixNames          = newHeaderNames(SvixHeaderID, SvixHeaderTimestamp, SvixHeaderSignature)
	stripeSignatureKey = textproto.CanonicalMIMEHeaderKey(StripeHeaderSignature)
	stripeStripeKey    = textproto.CanonicalMIMEHeaderKey(StripeHeaderStripe)
	stripeEventKey     = textproto.CanonicalMIMEHeaderKey(StripeHeaderEvent)
	stripeTimestampKey = textproto.CanonicalMIMEHeaderKey(StripeHeaderTimestamp)
)

func (f Flavor) names() (headerNames, bool) {
	switch f {
	case FlavorWebhook:
		return webhookNames, true
	case FlavorSvix:
		return svixNames, true
	}
	return headerNames{}, false
}
