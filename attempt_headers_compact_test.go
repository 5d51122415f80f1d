package hookd_test

import (
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// sentHeaders are the request headers of an attempt of msg at at, signed under scheme with sigs
// values, the endpoint's own header redacted, as the worker keeps them.
func sentHeaders(scheme string, msg string, at time.Time, sigs int) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	var std, hex []string
	for i := range sigs {
		std = append(std, "v1,"+strings.Repeat(string(rune('A'+i)), 43)+"=")
		hex = append(hex, "v1="+strings.Repeat(string(rune('a'+i)), 64))
	}
	h := http.Header{
		"Content-Type": {"application/json"}, "User-Agent": {"hookd/0.3.0"}, "X-Api-Key": {hookd.Redacted},
	}
	switch scheme {
	case "both", "webhook", "svix":
		if scheme != "svix" {
			h["Webhook-Id"], h["Webhook-Timestamp"], h["Webhook-Signature"] = []string{msg}, []string{ts}, []string{strings.Join(std, " ")}
		}
		if scheme != "webhook" {
			h["Svix-Id"], h["Svix-Timestamp"], h["Svix-Signature"] = []string{msg}, []string{ts}, []string{strings.Join(std, " ")}
		}
	case "stripe":
		sig := "t=" + ts + "," + strings.Join(hex, ",")
		h["Stripe-Signature"], h["X-Webhook-Signature"] = []string{sig}, []string{sig}
		h["X-Webhook-Timestamp"], h["X-Webhook-Event"] = []string{ts}, []string{"invoice.paid"}
	}
	return h
}

// roundTrip encodes a's headers as a store keeps them and reads them back into a copy of a.
func roundTrip(t *testing.T, a hookd.Attempt) (req, resp string, back hookd.Attempt) {
	t.Helper()
	req, resp = a.EncodeHeaders()
	back = hookd.Attempt{MessageID: a.MessageID, At: a.At}
	if err := back.DecodeHeaders(req, resp); err != nil {
		t.Fatalf("DecodeHeaders(%q, %q): %v", req, resp, err)
	}
	return req, resp, back
}

// The headers a worker keeps read back as they were, in a fraction of the JSON's bytes: the ids,
// the timestamps, the signature's second copy and the schemes' header names are not stored.
func TestAttemptHeadersCompactRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 6, 1, 2, 3, 999_999_000, time.UTC)
	msg := "msg_2abcdefghijklmnopqrstuvwxyz1"
	resp := http.Header{
		"Content-Type": {"application/json"}, "Content-Length": {"11"},
		"Date": {at.Add(time.Second).Format(http.TimeFormat)}, "Server": {"nginx"},
	}
	for _, scheme := range []string{"both", "webhook", "svix", "stripe"} {
		for _, sigs := range []int{1, 3} {
			for _, shift := range []time.Duration{0, -90 * time.Minute, 26 * time.Hour} {
				a := hookd.Attempt{MessageID: msg, At: at,
					RequestHeaders:  hookd.AttemptHeaders{Header: sentHeaders(scheme, msg, at.Add(shift), sigs)},
					ResponseHeaders: hookd.AttemptHeaders{Header: resp}}
				req, respText, back := roundTrip(t, a)
				if !reflect.DeepEqual(back.RequestHeaders, a.RequestHeaders) || !reflect.DeepEqual(back.ResponseHeaders, a.ResponseHeaders) {
					t.Errorf("%s, %d keys, %v: read back\n%v\n%v\nwant\n%v\n%v", scheme, sigs, shift,
						back.RequestHeaders, back.ResponseHeaders, a.RequestHeaders, a.ResponseHeaders)
				}
				if !strings.HasPrefix(req, "~") || strings.Contains(req, msg) || strings.Contains(respText, "GMT") {
					t.Errorf("%s: kept as %q and %q; want the compact form, without the id or the date", scheme, req, respText)
				}
				if old := a.RequestHeaders.Encode(); len(req)*5 > len(old)*3 {
					t.Errorf("%s, %d keys: %d bytes, against %d as JSON", scheme, sigs, len(req), len(old))
				}
			}
		}
	}
}

// Headers the compact form cannot hold, or holds only in part, read back as they were too.
func TestAttemptHeadersCompactEdges(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_700_000_000, 5)
	cases := []hookd.AttemptHeaders{
		{},
		{Omitted: 2},
		{Header: http.Header{"Content-Type": {"application/json"}}, Omitted: 3},
		{Header: http.Header{"A": nil}},
		{Header: http.Header{"A": {}}},
		{Header: http.Header{"": {"empty name"}}},
		{Header: http.Header{"A:b": {"colon in the name"}}},
		{Header: http.Header{"A": {"line\nbreak"}}},
		{Header: http.Header{"A": {"cr\rhere"}}},
		{Header: http.Header{"A": {"", ":", "|", "~", "a: b"}, "B|c": {"~|"}}},
		{Header: http.Header{"Webhook-Id": {"someone else's"}, "Svix-Id": {"msg_1"}}},
		{Header: http.Header{"Webhook-Id": {"msg_1", "msg_1"}}},
		{Header: http.Header{"Webhook-Timestamp": {"0017"}, "Svix-Timestamp": {"17"}}},
		{Header: http.Header{"Webhook-Timestamp": {"-5"}, "X-Webhook-Timestamp": {"-5"}}},
		{Header: http.Header{"Webhook-Timestamp": {"99999999999999999999"}}},
		{Header: http.Header{"Webhook-Signature": {"v1,a"}, "Svix-Signature": {"v1,b"}}},
		{Header: http.Header{"Stripe-Signature": {"t=1700000000,v1=ab"}}},
		{Header: http.Header{"Stripe-Signature": {"t=1700000000,v1=ab"}, "X-Webhook-Timestamp": {"1700000001"}}},
		{Header: http.Header{"Date": {"Tue, 14 Nov 2023 22:13:20 GMT"}}},
		{Header: http.Header{"Date": {"Tuesday, 14-Nov-23 22:13:20 GMT"}}},
		{Header: http.Header{"Date": {"Tue, 14 Nov 2023 22:13:20 GMT"}, "Webhook-Timestamp": {"1"}}},
		{Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}},
		{Header: http.Header{"webhook-id": {"msg_1"}}},
		{Header: http.Header{"X-Key": {hookd.Redacted, "[redacted] ", "", hookd.Redacted}}},
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("aZ09-_ ;=,:|~\"\\\t\n\r\x00\x7f\xc3\xa9\xff")
	names := []string{"X-Key", "Webhook-Id", "Svix-Timestamp", "Date", "Content-Type", "Stripe-Signature", "K", "~", "a:b"}
	for range 500 {
		h := http.Header{}
		for range r.IntN(6) {
			var vs []string
			for range r.IntN(3) {
				b := make([]byte, r.IntN(8))
				for i := range b {
					b[i] = alphabet[r.IntN(len(alphabet))]
				}
				vs = append(vs, string(b))
			}
			if r.IntN(3) == 0 {
				vs = []string{[]string{"msg_1", "1700000000", "application/json", "t=1700000000,x", hookd.Redacted}[r.IntN(5)]}
			}
			h[names[r.IntN(len(names))]] = vs
		}
		cases = append(cases, hookd.AttemptHeaders{Header: h, Omitted: r.IntN(4) / 3})
	}
	for _, c := range cases {
		a := hookd.Attempt{MessageID: "msg_1", At: at, RequestHeaders: c, ResponseHeaders: c}
		req, _, back := roundTrip(t, a)
		// As the JSON of earlier builds reads back (which replaces invalid UTF-8).
		want, err := hookd.DecodeAttemptHeaders(c.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if !sameHeaders(back.RequestHeaders, want) || !sameHeaders(back.ResponseHeaders, want) {
			t.Errorf("%#v kept as %q reads back as %#v", c, req, back.RequestHeaders)
		}
	}
}

// sameHeaders compares as JSON does: a name with no values and one with nil are alike.
func sameHeaders(a, b hookd.AttemptHeaders) bool {
	return a.Encode() == b.Encode()
}

// Headers kept as JSON by earlier builds read back as they did.
func TestAttemptHeadersJSONStillReads(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_700_000_000, 0)
	h := hookd.AttemptHeaders{Header: sentHeaders("both", "msg_1", at, 2)}
	for _, text := range []string{h.Encode(), `{"header":{"Webhook-Id":["msg_1"]},"omitted":2}`} {
		want, err := hookd.DecodeAttemptHeaders(text)
		if err != nil {
			t.Fatal(err)
		}
		a := hookd.Attempt{MessageID: "msg_other", At: at.Add(time.Hour)}
		if err := a.DecodeHeaders(text, text); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.RequestHeaders, want) || !reflect.DeepEqual(a.ResponseHeaders, want) {
			t.Errorf("%s reads back as %v", text, a.RequestHeaders)
		}
	}
}

// Damaged text is an error, never a panic.
func TestAttemptHeadersCompactDamaged(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_700_000_000, 0)
	a := hookd.Attempt{MessageID: "msg_1", At: at,
		RequestHeaders: hookd.AttemptHeaders{Header: sentHeaders("stripe", "msg_1", at, 2)}}
	req, _ := a.EncodeHeaders()
	for _, bad := range []string{"~", "~ab", "~ab|", "~z||", "~b||", "~b|x|", "~||\n:v", "{"} {
		if err := new(hookd.Attempt).DecodeHeaders(bad, ""); err == nil {
			t.Errorf("DecodeHeaders(%q) = nil; want an error", bad)
		}
	}
	for i := range len(req) {
		_ = new(hookd.Attempt).DecodeHeaders(req[:i], "") // an error or headers; not a panic
	}
}

func FuzzAttemptHeadersCompact(f *testing.F) {
	f.Add("Webhook-Id", "msg_1", "Date", "Tue, 14 Nov 2023 22:13:20 GMT", int64(1_700_000_000))
	f.Add("Svix-Timestamp", "1700000000", "Svix-Signature", "v1,abc", int64(1_700_000_000))
	f.Add("Stripe-Signature", "t=1,v1=ab", "X-Webhook-Timestamp", "1", int64(0))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, unix int64) {
		if unix < -1<<40 || unix > 1<<40 {
			return
		}
		h := hookd.AttemptHeaders{Header: http.Header{k1: {v1}}}
		h.Header[k2] = append(h.Header[k2], v2)
		a := hookd.Attempt{MessageID: "msg_1", At: time.Unix(unix, 0), RequestHeaders: h, ResponseHeaders: h}
		req, resp := a.EncodeHeaders()
		back := hookd.Attempt{MessageID: a.MessageID, At: a.At}
		if err := back.DecodeHeaders(req, resp); err != nil {
			t.Fatalf("DecodeHeaders(%q): %v", req, err)
		}
		want, err := hookd.DecodeAttemptHeaders(h.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if !sameHeaders(back.RequestHeaders, want) {
			t.Fatalf("%#v kept as %q reads back as %#v", h, req, back.RequestHeaders)
		}
		_ = new(hookd.Attempt).DecodeHeaders(v1, v2)
	})
}

// BenchmarkAttemptHeadersDecode reads back the headers of a typical attempt (both signature sets,
// one key, the endpoint's own header; a response of four headers) as a store's scan does: kept
// in the compact form (derived parts rebuilt) and, for comparison, kept as earlier builds'
// JSON.
//
//	go test -run '^$' -bench AttemptHeadersDecode .
func BenchmarkAttemptHeadersDecode(b *testing.B) {
	at := time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)
	msg := "msg_2abcdefghijklmnopqrstuvwxyz1"
	a := hookd.Attempt{MessageID: msg, At: at,
		RequestHeaders: hookd.AttemptHeaders{Header: sentHeaders("both", msg, at, 1)},
		ResponseHeaders: hookd.AttemptHeaders{Header: http.Header{"Content-Type": {"application/json"},
			"Content-Length": {"17"}, "Date": {at.Format(http.TimeFormat)}, "X-Request-Id": {"5f0c2a7e9b1d4c3a8e6f0b2d4c6a8e0f"}}}}
	compactReq, compactResp := a.EncodeHeaders()
	for _, tc := range []struct{ name, req, resp string }{
		{"compact", compactReq, compactResp},
		{"json", a.RequestHeaders.Encode(), a.ResponseHeaders.Encode()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got := hookd.Attempt{MessageID: msg, At: at}
				if err := got.DecodeHeaders(tc.req, tc.resp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tc.req)+len(tc.resp)), "stored-B")
		})
	}
	b.Run("encode-compact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = a.EncodeHeaders()
		}
	})
	b.Run("encode-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = a.RequestHeaders.Encode(), a.ResponseHeaders.Encode()
		}
	})
}
