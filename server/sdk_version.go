package server

import (
	"net/http"
	"strconv"
	"strings"
)

// sdkVersion is what an official Svix SDK says of itself in its User-Agent,
// "svix-libs/<major>.<minor>.<patch>/<language>[/<suffix>] ...".
type sdkVersion struct {
	major, minor int
	language     string
}

// sdkOf reads the caller's SDK version; ok is false for any other client.
func sdkOf(r *http.Request) (v sdkVersion, ok bool) {
	rest, ok := strings.CutPrefix(r.Header.Get("User-Agent"), "svix-libs/")
	if !ok {
		return v, false
	}
	version, rest, _ := strings.Cut(rest, "/")
	v.language, _, _ = strings.Cut(rest, " ")
	v.language, _, _ = strings.Cut(v.language, "/")
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return v, false
	}
	var err1, err2 error
	v.major, err1 = strconv.Atoi(parts[0])
	v.minor, err2 = strconv.Atoi(parts[1])
	return v, err1 == nil && err2 == nil
}

// before reports whether v is older than major.minor.
func (v sdkVersion) before(major, minor int) bool {
	return v.major < major || (v.major == major && v.minor < minor)
}

// sdkOlderThan reports whether the caller is an official Svix SDK older than major.minor. Other
// clients are never older.
func sdkOlderThan(r *http.Request, major, minor int) bool {
	v, ok := sdkOf(r)
	return ok && v.before(major, minor)
}
