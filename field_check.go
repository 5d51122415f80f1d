package hookd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on the strings of an input: a message, an application, an endpoint, an event type.
const (
	maxIDLen       = 256 // uid, eventId, event type names
	maxChannels    = 10
	maxChannelLen  = 128
	maxNameLen     = 256
	maxDescription = 4096
	maxTags        = 5 // Svix's
	maxTagLen      = 128
)

// Bounds of free text and metadata.
const (
	maxMetadata         = 64   // entries
	maxMetadataKeyLen   = 256  // bytes
	maxMetadataValueLen = 4096 // bytes
)

// checkText accepts UTF-8 text of at most max bytes without NUL characters: free text such as a
// description, where newlines and tabs are fine. (PostgreSQL's text cannot hold NUL, so refusing
// it here keeps every store alike.)
func checkText(field, s string, max int) error {
	switch {
	case len(s) > max:
		return invalid(field, fmt.Sprintf("is %d bytes, at most %d", len(s), max))
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return invalid(field, "contains a NUL character (U+0000)")
	}
	return nil
}

// checkMetadata accepts at most maxMetadata entries of non-empty keys and values that pass
// checkText.
func checkMetadata(m map[string]string) error {
	if len(m) > maxMetadata {
		return invalid("metadata", fmt.Sprintf("has %d entries, at most %d", len(m), maxMetadata))
	}
	for k, v := range m {
		if k == "" {
			return invalid("metadata", "has an empty key")
		}
		if err := checkText("metadata", k, maxMetadataKeyLen); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if err := checkText("metadata", v, maxMetadataValueLen); err != nil {
			return fmt.Errorf("value of %q: %w", k, err)
		}
	}
	return nil
}

// checkName accepts non-empty printable text of at most max bytes.
func checkName(field, s string, max int) error {
	switch {
	case s == "":
		return invalid(field, "is required")
	case len(s) > max:
		return invalid(field, fmt.Sprintf("is %d bytes, at most %d", len(s), max))
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return invalid(field, fmt.Sprintf("contains the unprintable character %U", r))
		}
	}
	return nil
}
