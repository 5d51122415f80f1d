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

// standardHeaderNames are the id, timestamp and signature header names of each flavor, in their
// canonical form (the form http.Header.Set writes), so that setting them builds no name.
var standardHeaderNames = map[signature.Flavor][3]string{
	signature.FlavorWebhook: canonicalNames(signature.HeaderID, signature.HeaderTimestamp, signature.HeaderSignature),
	signature.FlavorSvix:    canonicalNames(signature.SvixHeaderID, signature.SvixHeaderTimestamp, signature.SvixHeaderSignature),
}

func canonicalNames(id, timestamp, sig string) [3]string {
	return [3]string{http.CanonicalHeaderKey(id), http.CanonicalHeaderKey(timestamp), http.CanonicalHeaderKey(sig)}
}

// setStandardHeaders signs body once with s and writes the message id, the timestamp and the
// signature into dst under the names of each flavor, as dst.Set would. The values share one
// array, each name's a full slice of it.
func setStandardHeaders(dst http.Header, s *signature.Signer, flavors []signature.Flavor, id string, ts time.Time, body []byte) error {
	sig, err := s.Sign(id, ts, body)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	unix := strconv.FormatInt(ts.Unix(), 10)
	vals := make([]string, 0, 3*len(flavors))
	for _, f := range flavors {
		names := standardHeaderNames[f]
		i := len(vals)
		vals = append(vals, id, unix, sig)
		dst[names[0]] = vals[i : i+1 : i+1]
		dst[names[1]] = vals[i+1 : i+2 : i+2]
		dst[names[2]] = vals[i+2 : i+3 : i+3]
	}
	return nil
}
