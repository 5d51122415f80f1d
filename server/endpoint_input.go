package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// endpointBody is a request body decoded one field at a time, so that a handler knows which
// fields were given and which were null (PATCH), accepts both names of a renamed field, and
// names the field of a value of the wrong type.
type endpointBody map[string]json.RawMessage

func decodeEndpointBody(r *http.Request) (endpointBody, error) {
	var b endpointBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	return endpointObject(b)
}

// decodeOptionalEndpointBody is decodeEndpointBody where an empty body means {}.
func decodeOptionalEndpointBody(r *http.Request) (endpointBody, error) {
	b := endpointBody{} // stays {} for an empty body; JSON null makes it nil
	if err := decodeOptionalBody(r, &b); err != nil {
		return nil, err
	}
	return endpointObject(b)
}

// endpointObject refuses a body that was JSON null.
func endpointObject(b endpointBody) (endpointBody, error) {
	if b == nil {
		return nil, invalidField("body", "body", "must be a JSON object")
	}
	return b, nil
}

// epField is one field of an endpointBody.
type epField[T any] struct {
	name string // the name the caller used; the first name asked for when absent
	set  bool   // present, with a value or null
	null bool   // present and null
	v    T
}

// given reports whether the field came with a value (not absent, not null).
func (f *epField[T]) given() bool { return f.set && !f.null }

// bodyField reads the field called by one of names (a renamed field has two; giving both is a
// 422). want describes the JSON type for the error message.
func bodyField[T any](b endpointBody, want string, names ...string) (epField[T], error) {
	f := epField[T]{name: names[0]}
	var raw json.RawMessage
	for _, n := range names {
		v, ok := b[n]
		if !ok {
			continue
		}
		if f.set {
			return f, invalidField("body", n, fmt.Sprintf("give %s or %s, not both", f.name, n))
		}
		f.name, f.set, raw = n, true, v
	}
	if !f.set {
		return f, nil
	}
	if string(raw) == "null" {
		f.null = true
		return f, nil
	}
	if err := json.Unmarshal(raw, &f.v); err != nil {
		return f, invalidField("body", f.name, "must be "+want)
	}
	return f, nil
}

// endpointFields are the fields of EndpointIn, EndpointUpdate and EndpointPatch of both
// generations (and headers, which hookd also takes on create).
type endpointFields struct {
	url, description, uid, secret epField[string]
	version, rate                 epField[int]
	eventTypes, channels          epField[[]string]
	disabled                      epField[bool]
	metadata, headers             epField[map[string]string]
	scheme                        epField[string]    // hookd's own: how deliveries are signed
	retrySchedule                 epField[[]float64] // hookd's own (retry_policy.go)
	timeoutSeconds                epField[float64]
	ordered                       epField[bool] // hookd's own: deliveries one at a time, in order
}

// endpointRateField reads the rate, given as throttleRate, rateLimit or both: the SDKs 1.99 send
// both names with what a GET returned. As Svix's server does, a throttleRate with a value wins over
// rateLimit, and a value over a null.
func endpointRateField(b endpointBody) (epField[int], error) {
	throttle, err := bodyField[int](b, "a whole number", "throttleRate")
	if err != nil {
		return throttle, err
	}
	legacy, err := bodyField[int](b, "a whole number", "rateLimit")
	if err != nil || throttle.given() || (throttle.set && !legacy.given()) {
		return throttle, err
	}
	return legacy, nil
}

// readEndpointFields decodes and checks each field on its own (ranges, patterns, uid); what
// needs the whole endpoint (the URL, uniqueness) the library checks. minRate is 1 for create and
// update, 0 for patch (0 clears).
func readEndpointFields(b endpointBody, minRate int) (*endpointFields, error) {
	var f endpointFields
	var err error
	read := func(fn func() error) {
		if err == nil {
			err = fn()
		}
	}
	read(func() (e error) { f.url, e = bodyField[string](b, "a string", "url"); return })
	read(func() (e error) { f.description, e = bodyField[string](b, "a string", "description"); return })
	read(func() (e error) { f.uid, e = bodyField[string](b, "a string", "uid"); return })
	read(func() (e error) { f.secret, e = bodyField[string](b, "a string", "secret"); return })
	read(func() (e error) { f.version, e = bodyField[int](b, "a whole number", "version"); return })
	read(func() (e error) { f.rate, e = endpointRateField(b); return })
	read(func() (e error) {
		f.eventTypes, e = bodyField[[]string](b, "a list of strings", "eventTypes", "filterTypes")
		return
	})
	read(func() (e error) { f.channels, e = bodyField[[]string](b, "a list of strings", "channels"); return })
	read(func() (e error) { f.disabled, e = bodyField[bool](b, "true or false", "disabled"); return })
	read(func() (e error) {
		f.metadata, e = bodyField[map[string]string](b, "an object of strings", "metadata")
		return
	})
	read(func() (e error) {
		f.headers, e = bodyField[map[string]string](b, "an object of strings", "headers")
		return
	})
	read(func() (e error) { f.scheme, e = bodyField[string](b, "a string", "scheme"); return })
	read(func() (e error) { f.ordered, e = bodyField[bool](b, "true or false", "ordered"); return })
	read(func() (e error) {
		f.retrySchedule, e = bodyField[[]float64](b, "a list of seconds, or null", "retrySchedule")
		return
	})
	read(func() (e error) {
		f.timeoutSeconds, e = bodyField[float64](b, "a number of seconds, or null", "timeoutSeconds")
		return
	})
	if err != nil {
		return nil, err
	}
	switch hookd.SignatureScheme(f.scheme.v) {
	case "", hookd.SchemeStandard, hookd.SchemeSvix, hookd.SchemeStripe, hookd.SchemeEnvelope:
	default:
		return nil, invalidField("body", "scheme", fmt.Sprintf("%q is not one of standard, svix, stripe, envelope", f.scheme.v))
	}
	switch {
	case f.url.null:
		return nil, invalidField("body", "url", "must not be null")
	case f.uid.given():
		if err := checkUID("uid", f.uid.v, endpointIDPrefix); err != nil {
			return nil, err
		}
	}
	if f.version.given() && (f.version.v < 1 || f.version.v > 65535) {
		return nil, invalidField("body", "version", "must be from 1 to 65535")
	}
	if f.rate.given() && (f.rate.v < minRate || f.rate.v > 65535) {
		return nil, invalidField("body", f.rate.name, fmt.Sprintf("must be from %d to 65535", minRate))
	}
	if f.eventTypes.given() {
		if f.eventTypes.v, err = checkNameList(f.eventTypes.name, f.eventTypes.v, 256); err != nil {
			return nil, err
		}
		if len(f.eventTypes.v) == 0 {
			return nil, invalidField("body", f.eventTypes.name, "eventTypes can't be empty, it must have at least one item.")
		}
	}
	if f.channels.given() {
		if f.channels.v, err = checkNameList("channels", f.channels.v, 128); err != nil {
			return nil, err
		}
		if len(f.channels.v) < 1 || len(f.channels.v) > 10 {
			return nil, invalidField("body", "channels", "Channels must have at least 1 and at most 10 items, or be set to null.")
		}
	}
	if f.headers.given() {
		if err := checkEndpointHeaders(f.headers.v, "headers"); err != nil {
			return nil, err
		}
	}
	var schedule []time.Duration
	var timeout time.Duration
	if err := f.policy().applyTo(&schedule, &timeout); err != nil {
		return nil, err
	}
	return &f, nil
}

// checkNameList checks event type names or channels against the specs' pattern and returns the
// list without repeats (the specs' uniqueItems), in the order given.
func checkNameList(field string, list []string, maxLen int) ([]string, error) {
	out := make([]string, 0, len(list))
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if s == "" || len(s) > maxLen || !svixID.MatchString(s) {
			return nil, invalidField("body", field, fmt.Sprintf("%q: each must be 1 to %d characters of [a-zA-Z0-9-_.]", s, maxLen))
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
		if len(out) > maxNameList {
			return nil, invalidField("body", field, tooManyNames)
		}
	}
	return out, nil
}

// checkEventTypesExist refuses event types that are not event types, or are archived, as Svix's
// server does: one 422 naming them in the order given (the first maxNamedMissing, then how many
// more). The names are looked up at once. An event type the caller may not see (its feature flags)
// is refused as one that does not exist.
func (s *Server) checkEventTypesExist(r *http.Request, rc *reqCtx, f *endpointFields) error {
	if !f.eventTypes.given() {
		return nil
	}
	missing, err := s.client.MissingEventTypes(r.Context(), f.eventTypes.v)
	if err != nil {
		return err
	}
	hidden, err := s.hiddenEventTypes(r.Context(), rc, f.eventTypes.v)
	if err != nil {
		return err
	}
	if len(hidden) > 0 {
		gone := make(map[string]bool, len(missing))
		for _, n := range missing {
			gone[n] = true
		}
		missing = missing[:0]
		for _, n := range f.eventTypes.v {
			if gone[n] || hidden[n] {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := "The following event types don't exist: "
	if len(missing) > maxNamedMissing {
		msg += strings.Join(missing[:maxNamedMissing], ", ") + fmt.Sprintf(" (and %d more)", len(missing)-maxNamedMissing)
	} else {
		msg += strings.Join(missing, ", ")
	}
	return invalidField("body", f.eventTypes.name, msg)
}

// maxNamedMissing is how many missing event types a 422 names; it counts the rest.
const maxNamedMissing = 100

// applyTo writes the given fields onto in. With replace (POST, PUT) an absent field takes its
// default; without (PATCH) it stays. A null field takes its default either way.
func (f *endpointFields) applyTo(in *hookd.EndpointIn, replace bool) {
	if f.url.given() {
		in.URL = f.url.v
	}
	if f.description.set || replace {
		in.Description = f.description.v
	}
	if f.uid.set || replace {
		in.UID = f.uid.v
	}
	if f.version.set || replace {
		in.Version = max(f.version.v, 1)
	}
	if f.rate.set || replace {
		in.RateLimit = f.rate.v
	}
	if f.eventTypes.set || replace {
		in.EventTypes = f.eventTypes.v
	}
	if f.channels.set || replace {
		in.Channels = f.channels.v
	}
	if f.disabled.set || replace {
		in.Disabled = f.disabled.v
	}
	if f.metadata.set || replace {
		in.Metadata = maps.Clone(f.metadata.v)
	}
	if f.scheme.set { // absent, it stays on PUT too, as hookd's other settings do
		in.Scheme = hookd.SignatureScheme(f.scheme.v)
	}
	_ = f.policy().applyTo(&in.RetrySchedule, &in.AttemptTimeout) // checked by readEndpointFields
	if f.ordered.set {                                            // absent, it stays on PUT too; null turns it off
		in.Ordered = f.ordered.v && !f.ordered.null
	}
}

// policy is the retry policy the body gives (its parts absent, null or a value).
func (f *endpointFields) policy() policyPatch {
	return policyPatch{
		schedule: optional[[]float64]{Set: f.retrySchedule.set, Null: f.retrySchedule.null, Value: f.retrySchedule.v},
		timeout:  optional[float64]{Set: f.timeoutSeconds.set, Null: f.timeoutSeconds.null, Value: f.timeoutSeconds.v},
	}
}

// renameLibraryField renames the field of a library *hookd.ValidationError to the name the
// caller used (the library says filterTypes, rateLimit and secret).
func renameLibraryField(err error, names map[string]string) error {
	var ve *hookd.ValidationError
	if errors.As(err, &ve) {
		if n, ok := names[ve.Field]; ok && n != ve.Field {
			return invalidField("body", n, ve.Reason)
		}
	}
	return err
}

// libraryNames maps the library's field names to the caller's.
func (f *endpointFields) libraryNames() map[string]string {
	return map[string]string{"filterTypes": f.eventTypes.name, "rateLimit": f.rate.name}
}
