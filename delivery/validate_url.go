package delivery

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLength is the longest endpoint URL [ValidateURL] accepts, in bytes.
const MaxURLLength = 2048

// ErrInvalidURL is wrapped by every [*URLError]: an endpoint URL that hookd
// will not call. Retrying does not help.
var ErrInvalidURL = errors.New("invalid endpoint URL")

// URLError says why an endpoint URL was refused. It unwraps to
// [ErrInvalidURL].
type URLError struct {
	// URL is the refused URL as given.
	URL string
	// Reason says what is wrong in words a customer can act on.
	Reason string
}

// Error returns, for example,
// `invalid endpoint URL "ftp://x": scheme must be http or https`. A very long
// URL is shortened in the message; the URL field keeps it whole.
func (e *URLError) Error() string {
	const show = 80
	u := e.URL
	if len(u) > show {
		u = u[:show] + "..."
	}
	return fmt.Sprintf("%s %q: %s", ErrInvalidURL, u, e.Reason)
}

// Unwrap returns [ErrInvalidURL].
func (e *URLError) Unwrap() error { return ErrInvalidURL }

// ValidateURL reports whether raw can be an endpoint URL: absolute, http or
// https, with a host, without a user name or password, a port (if any) in
// 1-65535, and at most [MaxURLLength] bytes. It returns nil or a
// [*URLError]. It does not resolve the host: the SSRF guard judges the
// address at dial time.
func ValidateURL(raw string) error {
	refuse := func(reason string) error { return &URLError{URL: raw, Reason: reason} }
	switch {
	case raw == "":
		return refuse("URL is empty")
	case len(raw) > MaxURLLength:
		return refuse(fmt.Sprintf("longer than %d characters (%d)", MaxURLLength, len(raw)))
	case strings.TrimSpace(raw) != raw:
		return refuse("leading or trailing white space")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return refuse("cannot be parsed: " + err.Error())
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return refuse("scheme must be http or https")
	case u.Opaque != "":
		return refuse("must be of the form " + u.Scheme + "://host/path")
	case u.User != nil:
		return refuse("must not contain a user name or password")
	case u.Hostname() == "":
		return refuse("host is missing")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return refuse("port must be between 1 and 65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return refuse("port is empty")
	}
	return nil
}
