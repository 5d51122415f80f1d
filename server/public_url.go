package server

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ParsePublicURL checks the address users reach the server at: an absolute http or https URL of
// a host and an optional port, with no path (the API, the dashboard and the portal are served at
// its root), user, query or fragment.
func ParsePublicURL(s string) (*url.URL, error) {
	const accepts = "use the http(s) URL the server is reached at, scheme and host only, e.g. https://hooks.example.com"
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New(accepts)
	}
	return &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}, nil
}

// requestBase is the scheme and host of the server as the request reached it, for a link without
// a public URL: the address of the connection's local end (the listener's), never the Host
// header, which the client chooses.
func requestBase(r *http.Request) *url.URL {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := "localhost"
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		host = a.String()
	}
	return &url.URL{Scheme: scheme, Host: host}
}
