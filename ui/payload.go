package ui

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Bounds of the payload a message page shows: objects and arrays are indented down to
// indentDepth levels and written compact below, and the text stops at shownPayload bytes, with a
// link to the whole payload. Indenting every level would make a payload nested d levels deep
// about 2d² bytes of page.
const (
	indentDepth  = 16
	shownPayload = 256 << 10
)

// renderPayload returns the payload as the message page shows it, indented as above, keys and
// numbers as they were sent; cut is true when the text stops before the payload's end. A payload
// that is not JSON is shown as it is.
func renderPayload(raw []byte) (text string, cut bool) {
	if !json.Valid(raw) {
		return cutText(string(raw))
	}
	var b strings.Builder
	newline := func(depth int) {
		b.WriteByte('\n')
		for range depth {
			b.WriteString("  ")
		}
	}
	depth := 0
	inString, escaped := false, false
	for i := 0; i < len(raw) && b.Len() <= shownPayload; i++ {
		c := raw[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			inString = true
			b.WriteByte(c)
		case '{', '[':
			b.WriteByte(c)
			j := i + 1
			for j < len(raw) && strings.IndexByte(" \t\n\r", raw[j]) >= 0 {
				j++
			}
			if j < len(raw) && (raw[j] == '}' || raw[j] == ']') { // empty: {} or []
				b.WriteByte(raw[j])
				i = j
				continue
			}
			depth++
			if depth <= indentDepth {
				newline(depth)
			}
		case '}', ']':
			depth--
			if depth < indentDepth {
				newline(depth)
			}
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			if depth <= indentDepth {
				newline(depth)
			}
		case ':':
			b.WriteByte(c)
			if depth <= indentDepth {
				b.WriteByte(' ')
			}
		default:
			b.WriteByte(c)
		}
	}
	return cutText(b.String())
}

// cutText returns s, or its first shownPayload bytes (ending on a whole character) and true.
func cutText(s string) (string, bool) {
	if len(s) <= shownPayload {
		return s, false
	}
	n := shownPayload
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// payloadFile answers with a message's payload as it is stored, as a JSON file to download
// rather than a page to render.
func (h *Handler) payloadFile(q *req) error {
	_, m, err := h.pathMessage(q)
	if err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "application/json")
	q.w.Header().Set("X-Content-Type-Options", "nosniff")
	q.w.Header().Set("Content-Disposition", `attachment; filename="`+m.ID+`.json"`)
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(m.Payload)
	return nil
}
