package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd/internal/jsondepth"
)

// decodeBody decodes the request's JSON body into v. Malformed JSON is a 400; a value of the
// wrong type is a 422 naming the field; a body over the limit is a 413.
func decodeBody(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return invalidField("body", "body", "a JSON body is required")
	}
	return unmarshalBody(body, v)
}

// decodeOptionalBody is decodeBody for a body that may be absent or empty (v stays as it is).
func decodeOptionalBody(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	return unmarshalBody(body, v)
}

// readBody reads the request body: a body over the limit is its *http.MaxBytesError (413), any
// other failure a 400.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, mb
		}
		return nil, badRequest("invalid_body", "The request body could not be read.")
	}
	return body, nil
}

// unmarshalBody decodes a JSON body into v: malformed JSON is a 400, a value of the wrong type a
// 422 naming the field.
func unmarshalBody(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "body"
			}
			return invalidField("body", field, "expected "+te.Type.String()+", got JSON "+te.Value)
		}
		return badRequest("invalid_json", "The request body is not valid JSON: "+err.Error())
	}
	return nil
}

// checkPayloadDepth refuses a payload that nests deeper than jsondepth.MaxPayload levels (the
// payload object is level 1): what is stored is rendered, decoded and re-encoded later, at a cost
// that grows with the square of the depth.
func checkPayloadDepth(field string, payload []byte) error {
	if jsondepth.Depth(payload, jsondepth.MaxPayload) > jsondepth.MaxPayload {
		return invalidField("body", field, "nests deeper than "+strconv.Itoa(jsondepth.MaxPayload)+" levels")
	}
	return nil
}

// svixID is the pattern of uid and eventId in both specs.
var svixID = regexp.MustCompile(`^[a-zA-Z0-9\-_.]+$`)

// The id prefixes a uid of the same entity may not start with (Svix's BaseUid::ID_PREFIX).
const (
	appIDPrefix      = "app_"
	endpointIDPrefix = "ep_"
)

// checkUID validates a uid (or eventId) as Svix does: 1 to 256 characters of [a-zA-Z0-9-_.],
// and, when idPrefix is not empty, not starting with idPrefix, the prefix of the ids of the uid's
// own entity (app_ for an application, ep_ for an endpoint), so that a uid is never read as an id.
func checkUID(field, v, idPrefix string) error {
	switch {
	case v == "":
		return invalidField("body", field, "must not be empty")
	case len(v) > 256:
		return invalidField("body", field, "at most 256 characters")
	case !svixID.MatchString(v):
		return invalidField("body", field, "must match ^[a-zA-Z0-9\\-_.]+$")
	case idPrefix != "" && strings.HasPrefix(v, idPrefix):
		return invalidField("body", field, "Uids are not allowed to have the same prefix as the ID. Prefix with _?")
	}
	return nil
}

// queryInt reads an integer query parameter within [lo, hi]; def when absent.
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, invalidField("query", name, "must be a whole number from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
	}
	return n, nil
}

// queryTime reads an RFC 3339 time query parameter; nil when absent.
func queryTime(r *http.Request, name string) (*time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, invalidField("query", name, "must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z")
	}
	return &t, nil
}

// queryBool reads a boolean query parameter; def when absent.
func queryBool(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, invalidField("query", name, "must be true or false")
	}
	return b, nil
}
