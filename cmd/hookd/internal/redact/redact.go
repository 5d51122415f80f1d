// Package redact hides the secrets of values that hookd echoes in errors and reports.
package redact

import (
	"net/url"
	"strings"
)

// URL hides the password of a URL-shaped value (a DATABASE_URL), to echo it in an error.
func URL(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil {
		return u.Redacted()
	}
	if i := strings.Index(v, "://"); i >= 0 && strings.Contains(v[i:], "@") {
		return v[:i+3] + "xxxxx@" + v[strings.LastIndex(v, "@")+1:]
	}
	return v
}
