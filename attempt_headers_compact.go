package hookd

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Stores keep an attempt's two header sets as text (Attempt.EncodeHeaders), in a compact form
// that leaves out what follows from the attempt's other columns and from the signature schemes:
// the message id (Webhook-Id, Svix-Id), the signature's timestamp (stored once, as seconds from
// the attempt's time), the signature (stored once, however many header sets carry it), the
// header names of the schemes and Content-Type: application/json. Reading it back
// (Attempt.DecodeHeaders) gives the very headers that were encoded: a header is left out only
// when its value is what the rule gives, and a set the form cannot hold (a name with a colon or
// no values, a line break, a NUL or invalid UTF-8, values left out by the bound) is kept as
// AttemptHeaders.Encode's JSON, which is also what earlier builds wrote and still reads back.
//
// The form is one line "~CODES|SECONDS|SIGNATURE", then a line "Name:value" for each value of
// every other header, names in order ("Name" alone for a value Redacted). Each code stands for one header (compactHeaders); SECONDS
// is the timestamp (or Date) less the Unix seconds of the attempt's time, empty when no code
// uses it.
//
// The signature is kept rather than computed again when the attempt is read: computing it needs
// the message's payload, which payload retention and expunging remove, and the endpoint's keys
// as they were, which rotation replaces and expiry removes; the detail would then show a
// signature it cannot vouch for, or none. Kept once it costs about 47 bytes a key.

// compactMark starts the compact form; JSON text starts with '{'.
const compactMark = '~'

// headerRule says how a coded header's value follows.
type headerRule uint8

const (
	ruleID        headerRule = iota // the message id
	ruleUnix                        // the timestamp, as Unix seconds
	ruleSignature                   // the signature
	ruleStripe                      // "t=" timestamp "," signature
	ruleJSON                        // application/json
	ruleDate                        // the timestamp, as an HTTP date
)

// compactHeaders are the headers the compact form codes, by code. Codes are stored: a code
// keeps its meaning for good, and new ones are added at the end.
var compactHeaders = []struct {
	code byte
	name string
	rule headerRule
}{
	{'a', "Webhook-Id", ruleID},
	{'b', "Webhook-Timestamp", ruleUnix},
	{'c', "Webhook-Signature", ruleSignature},
	{'d', "Svix-Id", ruleID},
	{'e', "Svix-Timestamp", ruleUnix},
	{'f', "Svix-Signature", ruleSignature},
	{'g', "Content-Type", ruleJSON},
	{'h', "X-Webhook-Timestamp", ruleUnix},
	{'i', "X-Webhook-Signature", ruleStripe},
	{'j', "Stripe-Signature", ruleStripe},
	{'k', "Date", ruleDate},
}

// compactCode returns the index in compactHeaders of code, or -1.
func compactCode(code byte) int {
	if i := int(code) - 'a'; i >= 0 && i < len(compactHeaders) {
		return i
	}
	return -1
}

// compactValues are the values the rules give for one header set.
type compactValues struct {
	id       string
	base     int64 // the Unix seconds of the attempt's time
	delta    int64 // the timestamp less base
	hasTime  bool
	sig      string
	hasSig   bool
	unixText string // the timestamp as Unix seconds, once hasTime
}

func (v *compactValues) setTime(delta int64) {
	v.delta, v.hasTime = delta, true
	v.unixText = strconv.FormatInt(v.base+delta, 10)
}

// value returns the value rule gives, and whether it gives one.
func (v *compactValues) value(rule headerRule) (string, bool) {
	switch rule {
	case ruleID:
		return v.id, true
	case ruleUnix:
		return v.unixText, v.hasTime
	case ruleSignature:
		return v.sig, v.hasSig
	case ruleStripe:
		return "t=" + v.unixText + "," + v.sig, v.hasTime && v.hasSig
	case ruleJSON:
		return "application/json", true
	case ruleDate:
		return time.Unix(v.base+v.delta, 0).UTC().Format(http.TimeFormat), v.hasTime
	}
	return "", false
}

// single returns h's value of name when it has exactly one.
func single(h http.Header, name string) (string, bool) {
	if vs := h[name]; len(vs) == 1 {
		return vs[0], true
	}
	return "", false
}

// encodeCompact returns h in the compact form for an attempt of message id made at at, or
// h.Encode() when the form cannot hold it.
func encodeCompact(h AttemptHeaders, id string, at time.Time) string {
	if len(h.Header) == 0 && h.Omitted == 0 {
		return ""
	}
	if h.Omitted != 0 || !compactable(h.Header) {
		return h.Encode()
	}
	v := compactValues{id: id, base: at.Unix()}
	// The timestamp: the first timestamp header that is plain Unix seconds, else a Date.
	for _, name := range [...]string{"Webhook-Timestamp", "Svix-Timestamp", "X-Webhook-Timestamp"} {
		if s, ok := single(h.Header, name); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s {
				v.setTime(n - v.base)
				break
			}
		}
	}
	if !v.hasTime {
		if s, ok := single(h.Header, "Date"); ok {
			if t, err := http.ParseTime(s); err == nil {
				v.setTime(t.Unix() - v.base) // kept only if it formats back to s
			}
		}
	}
	// The signature: a Standard Webhooks one, else what follows the timestamp in a Stripe one.
	for _, name := range [...]string{"Webhook-Signature", "Svix-Signature"} {
		if s, ok := single(h.Header, name); ok {
			v.sig, v.hasSig = s, true
			break
		}
	}
	if !v.hasSig && v.hasTime {
		prefix := "t=" + v.unixText + ","
		for _, name := range [...]string{"X-Webhook-Signature", "Stripe-Signature"} {
			if s, ok := single(h.Header, name); ok && strings.HasPrefix(s, prefix) {
				v.sig, v.hasSig = s[len(prefix):], true
				break
			}
		}
	}
	var codes [16]byte
	coded := codes[:0]
	usesTime, usesSig := false, false
	for _, c := range compactHeaders {
		s, ok := single(h.Header, c.name)
		if !ok {
			continue
		}
		if want, ok := v.value(c.rule); ok && want == s {
			coded = append(coded, c.code)
			usesTime = usesTime || c.rule == ruleUnix || c.rule == ruleStripe || c.rule == ruleDate
			usesSig = usesSig || c.rule == ruleSignature || c.rule == ruleStripe
		}
	}
	var stack [MaxAttemptHeaders]string
	names := stack[:0]
	size := 1 + len(coded) + 24
	if usesSig {
		size += len(v.sig)
	}
	for k, vs := range h.Header {
		if isCoded(coded, k) {
			continue
		}
		names = append(names, k)
		for _, s := range vs {
			size += len(k) + len(s) + 2
		}
	}
	slices.Sort(names)
	b := make([]byte, 0, size)
	b = append(b, compactMark)
	b = append(b, coded...)
	b = append(b, '|')
	if usesTime {
		b = strconv.AppendInt(b, v.delta, 10)
	}
	b = append(b, '|')
	if usesSig {
		b = append(b, v.sig...)
	}
	for _, k := range names {
		for _, s := range h.Header[k] {
			b = append(b, '\n')
			b = append(b, k...)
			if s != Redacted { // a redacted value is the name alone
				b = append(b, ':')
				b = append(b, s...)
			}
		}
	}
	return string(b)
}

// isCoded reports whether the header name is one of coded's.
func isCoded(coded []byte, name string) bool {
	for _, c := range coded {
		if compactHeaders[compactCode(c)].name == name {
			return true
		}
	}
	return false
}

// compactable reports whether the compact form holds h: every name without a colon and with
// at least one value; every name and value valid UTF-8 without a line break or a NUL, which
// PostgreSQL's text refuses (the JSON escapes them).
func compactable(h http.Header) bool {
	for k, vs := range h {
		if len(vs) == 0 || k == "" || strings.ContainsAny(k, ":\r\n\x00") || !utf8.ValidString(k) {
			return false
		}
		for _, s := range vs {
			if strings.ContainsAny(s, "\r\n\x00") || !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}

// decodeCompact reads what encodeCompact wrote for an attempt of message id made at at (or the
// JSON that AttemptHeaders.Encode wrote); "" is no headers.
func decodeCompact(s, id string, at time.Time) (AttemptHeaders, error) {
	if s == "" || s[0] != compactMark {
		return DecodeAttemptHeaders(s)
	}
	bad := func(why string) (AttemptHeaders, error) {
		return AttemptHeaders{}, fmt.Errorf("attempt headers: %s in %.40q", why, s)
	}
	first, rest, _ := strings.Cut(s[1:], "\n")
	codes, after, ok := strings.Cut(first, "|")
	if !ok {
		return bad("no timestamp field")
	}
	secs, sig, ok := strings.Cut(after, "|")
	if !ok {
		return bad("no signature field")
	}
	v := compactValues{id: id, base: at.Unix(), sig: sig, hasSig: true}
	if secs != "" {
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil {
			return bad("a bad timestamp")
		}
		v.setTime(n)
	}
	lines := strings.Count(rest, "\n") + 1
	h := make(http.Header, len(codes)+lines)
	// The values share one array, each name's a full slice of it.
	vals := make([]string, 0, len(codes)+lines)
	for i := 0; i < len(codes); i++ {
		j := compactCode(codes[i])
		if j < 0 {
			return bad("an unknown code")
		}
		c := compactHeaders[j]
		val, ok := v.value(c.rule)
		if !ok {
			return bad("a code without its value")
		}
		vals = append(vals, val)
		h[c.name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			val = Redacted
		}
		if name == "" {
			return bad("a line without a name")
		}
		if prev, ok := h[name]; ok {
			h[name] = append(prev, val)
			continue
		}
		vals = append(vals, val)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return AttemptHeaders{Header: h}, nil
}

// EncodeHeaders returns the text a store keeps of a's request and response headers. It reads
// a.MessageID and a.At, which DecodeHeaders needs set to the same values.
func (a *Attempt) EncodeHeaders() (request, response string) {
	return encodeCompact(a.RequestHeaders, a.MessageID, a.At), encodeCompact(a.ResponseHeaders, a.MessageID, a.At)
}

// DecodeHeaders sets a's request and response headers from the text EncodeHeaders returned, or
// from the JSON earlier builds kept (AttemptHeaders.Encode). a.MessageID and a.At must be set.
func (a *Attempt) DecodeHeaders(request, response string) error {
	var err error
	if a.RequestHeaders, err = decodeCompact(request, a.MessageID, a.At); err != nil {
		return err
	}
	a.ResponseHeaders, err = decodeCompact(response, a.MessageID, a.At)
	return err
}
