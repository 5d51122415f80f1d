package server

import "net/http"

// generation is the set of Svix API shapes a caller can decode.
type generation int

const (
	// genCurrent is what Svix's server writes: every field it serializes, those its OpenAPI file
	// hides included (filterTypes beside eventTypes, rateLimit beside throttleRate, version).
	// Every SDK decodes it but the strict Go ones.
	genCurrent generation = iota
	// genV144 is exactly the API the Svix server 1.44.0 described: filterTypes, rateLimit, and no
	// field that came later. The Go SDK up to v1.56.x decodes with an openapi client that rejects
	// an unknown field and requires its own.
	genV144
)

// lastStrictGoMinor is the last minor version of the Svix Go SDK (1.x) whose models reject unknown
// fields: from 1.57 on its models are plain encoding/json structs.
const lastStrictGoMinor = 56

// generationOf picks the generation from the User-Agent the Svix SDKs send,
// "svix-libs/<version>/<language>[/<suffix>] ...": the Go SDK up to 1.56.x is genV144, every other
// SDK and client genCurrent. The header X-Hookd-Api-Generation: 1.44 forces genV144.
func generationOf(r *http.Request) generation {
	if r.Header.Get("X-Hookd-Api-Generation") == "1.44" {
		return genV144
	}
	if v, ok := sdkOf(r); ok && v.language == "go" && v.before(1, lastStrictGoMinor+1) {
		return genV144
	}
	return genCurrent
}
