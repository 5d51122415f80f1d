package server

import (
	"net/http"
	"strconv"
	"strings"
)

// generation is the version of the Svix API's shapes a caller speaks.
type generation int

const (
	// genCurrent is today's API: eventTypes, throttleRate (npm svix 2.x, the other current SDKs).
	genCurrent generation = iota
	// genV144 is the API the Svix server 1.44.0 shipped: filterTypes, rateLimit, and no field that
	// came later (the Go SDK v1.44.0 rejects unknown fields).
	genV144
)

// generationOf picks the generation from the User-Agent the Svix SDKs send,
// "svix-libs/<version>/<language>": a version below 1.45 is genV144. The header
// X-Hookd-Api-Generation: 1.44 forces it for other clients.
func generationOf(r *http.Request) generation {
	if r.Header.Get("X-Hookd-Api-Generation") == "1.44" {
		return genV144
	}
	ua := r.Header.Get("User-Agent")
	rest, ok := strings.CutPrefix(ua, "svix-libs/")
	if !ok {
		return genCurrent
	}
	version, _, _ := strings.Cut(rest, "/")
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return genCurrent
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return genCurrent
	}
	if major < 1 || (major == 1 && minor < 45) {
		return genV144
	}
	return genCurrent
}
