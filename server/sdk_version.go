package server

import (
	"net/http"
	"strconv"
	"strings"
)

// sdkOlderThan reports whether the caller is an official Svix SDK (User-Agent
// "svix-libs/<version>/<language>") older than major.minor. Other clients are never older.
func sdkOlderThan(r *http.Request, major, minor int) bool {
	rest, ok := strings.CutPrefix(r.Header.Get("User-Agent"), "svix-libs/")
	if !ok {
		return false
	}
	version, _, _ := strings.Cut(rest, "/")
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || (ma == major && mi < minor)
}
