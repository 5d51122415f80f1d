package hookd

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookd/hookd/signature"
)

// SignatureHeaders picks the names a Standard Webhooks signature is sent under. Svix's server
// sends svix-id, svix-timestamp and svix-signature (webhook-* once white-labelled); receiver
// libraries read one set or the other: svix's Webhook reads either, Clerk's and Resend's
// receivers read svix-*, the Standard Webhooks libraries and OpenAI's read webhook-*.
type SignatureHeaders int

const (
	// HeadersBoth sends both sets with the same values, so that every receiver finds the names
	// it reads. The default.
	HeadersBoth SignatureHeaders = iota
	// HeadersWebhook sends webhook-id, webhook-timestamp and webhook-signature only, as the
	// Standard Webhooks specification names them (Svix's white-labelled headers).
	HeadersWebhook
	// HeadersSvix sends svix-id, svix-timestamp and svix-signature only, as Svix's server does by
	// default.
	HeadersSvix
)

// String returns "both", "webhook" or "svix", the names ParseSignatureHeaders accepts.
func (h SignatureHeaders) String() string {
	switch h {
	case HeadersBoth:
		return "both"
	case HeadersWebhook:
		return "webhook"
	case HeadersSvix:
		return "svix"
	}
	return "SignatureHeaders(" + strconv.Itoa(int(h)) + ")"
}

// ParseSignatureHeaders returns the header set named s: "both", "webhook" or "svix".
func ParseSignatureHeaders(s string) (SignatureHeaders, error) {
	for _, h := range []SignatureHeaders{HeadersBoth, HeadersWebhook, HeadersSvix} {
		if s == h.String() {
			return h, nil
		}
	}
	return 0, fmt.Errorf("unknown signature headers %q: use both, webhook or svix", s)
}

// flavors returns the header sets an endpoint with scheme is signed under. An endpoint of
// SchemeSvix asked for svix-* alone and gets them whatever h is; SchemeStandard gets h's.
func (h SignatureHeaders) flavors(scheme SignatureScheme) []signature.Flavor {
	switch {
	case scheme == SchemeSvix || h == HeadersSvix:
		return []signature.Flavor{signature.FlavorSvix}
	case h == HeadersWebhook:
		return []signature.Flavor{signature.FlavorWebhook}
	}
	return []signature.Flavor{signature.FlavorWebhook, signature.FlavorSvix}
}

// standardHeaderNames are the id, timestamp and signature header names of each flavor.
var standardHeaderNames = map[signature.Flavor][3]string{
	signature.FlavorWebhook: {signature.HeaderID, signature.HeaderTimestamp, signature.HeaderSignature},
	signature.FlavorSvix:    {signature.SvixHeaderID, signature.SvixHeaderTimestamp, signature.SvixHeaderSignature},
}

// setStandardHeaders signs body once with s and writes the message id, the timestamp and the
// signature into dst under the names of each flavor.
func setStandardHeaders(dst http.Header, s *signature.Signer, flavors []signature.Flavor, id string, ts time.Time, body []byte) error {
	sig, err := s.Sign(id, ts, body)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	unix := strconv.FormatInt(ts.Unix(), 10)
	for _, f := range flavors {
		names := standardHeaderNames[f]
		dst.Set(names[0], id)
		dst.Set(names[1], unix)
		dst.Set(names[2], sig)
	}
	return nil
}
