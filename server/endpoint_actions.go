package server

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hookd/hookd"
)

// The endpoint routes that act rather than configure: recover, send-example, stats.

// recoverEndpoint queues a manual attempt of every failed delivery to the endpoint created in
// [since, until), at most hookd.MaxRecover of them, in the background, and answers 202 at once
// with a running task, as Svix does. Like Svix it recovers at most 14 days (and five minutes, for
// clock skew) before until or, without until, now.
func (s *Server) recoverEndpoint(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	b, err := decodeEndpointBody(r)
	if err != nil {
		return err
	}
	const timeWant = "an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"
	since, err := bodyField[time.Time](b, timeWant, "since")
	if err != nil {
		return err
	}
	until, err := bodyField[time.Time](b, timeWant, "until")
	if err != nil {
		return err
	}
	if !since.given() {
		return invalidField("body", "since", "field required")
	}
	end, limit := (*time.Time)(nil), time.Now()
	if until.given() {
		if !until.v.After(since.v) {
			return invalidField("body", "until", "must be after since")
		}
		end, limit = &until.v, until.v
	}
	if since.v.Before(limit.Add(-maxRecoverWindow)) {
		return invalidField("body", "since", "Cannot recover more than 14 days of messages")
	}
	if err := s.client.RecoverInBackground(r.Context(), a.ID, ep.ID, since.v, end); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, recoverOutOf(rc.gen, "qtask_"+rand.Text(), time.Now()))
	return nil
}

// maxRecoverWindow is how far before until (or now) a recovery may reach: Svix's 14 days, and
// five minutes for clock skew.
const maxRecoverWindow = 14*24*time.Hour + 5*time.Minute

// pingEventType is Svix's built-in test event.
const pingEventType = "svix.ping"

// sendEndpointExample sends a message of the event type to this endpoint alone, its payload the
// first example of the event type's newest schema, else a small stand-in.
func (s *Server) sendEndpointExample(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	b, err := decodeEndpointBody(r)
	if err != nil {
		return err
	}
	et, err := bodyField[string](b, "a string", "eventType")
	if err != nil {
		return err
	}
	if !et.given() {
		return invalidField("body", "eventType", "field required")
	}
	if err := checkUID("eventType", et.v, ""); err != nil {
		return err
	}
	payload := s.examplePayload(r, rc, et.v)
	m, err := s.client.SendToEndpoint(r.Context(), a.ID, ep.ID, &hookd.MessageIn{EventType: et.v, Payload: payload})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toMsgOut(m, true))
	return nil
}

// examplePayload returns the example of the event type: svix.ping's is {"success":true}; a
// catalogued one's is the first object in "examples" of its newest schema version; anything else
// is a small stand-in naming the event type, as it is for one the caller may not see.
func (s *Server) examplePayload(r *http.Request, rc *reqCtx, eventType string) json.RawMessage {
	if eventType == pingEventType {
		return json.RawMessage(`{"success":true}`)
	}
	fallback, _ := json.Marshal(map[string]any{"eventType": eventType, "example": true})
	et, err := s.client.GetEventType(r.Context(), eventType)
	if err != nil || len(et.Schemas) == 0 || !rc.visible(et) {
		return fallback
	}
	if ex := schemaExample(et.Schemas); ex != nil {
		return ex
	}
	return fallback
}

// NewerSchemaFirst orders the versions of an event type's schemas newest first: numeric versions
// by number, then the rest by name, descending. It is a comparison for slices.SortFunc.
func NewerSchemaFirst(x, y string) int {
	nx, ex := strconv.Atoi(x)
	ny, ey := strconv.Atoi(y)
	switch {
	case ex == nil && ey == nil:
		return ny - nx
	case ex == nil:
		return -1
	case ey == nil:
		return 1
	}
	return cmp.Compare(y, x)
}

// schemaExample finds the example in Svix's schemas {"<version>": {JSON Schema}}: the newest
// version's first "examples" entry (or "example") that is an object.
func schemaExample(schemas json.RawMessage) json.RawMessage {
	var byVersion map[string]struct {
		Examples []json.RawMessage `json:"examples"`
		Example  json.RawMessage   `json:"example"`
	}
	if json.Unmarshal(schemas, &byVersion) != nil {
		return nil
	}
	versions := make([]string, 0, len(byVersion))
	for v := range byVersion {
		versions = append(versions, v)
	}
	slices.SortFunc(versions, NewerSchemaFirst)
	for _, v := range versions {
		s := byVersion[v]
		for _, c := range append(s.Examples, s.Example) {
			if exampleIsObject(c) {
				return c
			}
		}
	}
	return nil
}

func exampleIsObject(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &obj) == nil && obj != nil
}

// statsWindow is the longest window endpoint stats count over, and the default one: Svix allows five
// minutes more, so that a caller may pass now less 28 days.
const (
	statsWindow      = 28 * 24 * time.Hour
	statsWindowSlack = 5 * time.Minute
)

// endpointStats counts the attempts made to the endpoint in [since, until), as Svix's server
// does: until defaults to now and may not be in the future, since defaults to 28 days before until
// and may not be earlier (400 invalid_range).
func (s *Server) endpointStats(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	since, err := queryTime(r, "since")
	if err != nil {
		return err
	}
	until, err := queryTime(r, "until")
	if err != nil {
		return err
	}
	now := time.Now()
	end := now
	if until != nil {
		if until.After(now) {
			return badRequest("invalid_range", "'until' cannot be in the future")
		}
		end = *until
	}
	start := end.Add(-statsWindow)
	if since != nil {
		if end.Sub(*since) > statsWindow+statsWindowSlack {
			return badRequest("invalid_range", "'since' cannot be more than 28 days prior to "+chronoUTC(end))
		}
		start = *since
	}
	_, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	st, err := s.client.Store().EndpointStats(r.Context(), ep.ID, start, end)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointStatsOf(rc.gen, st))
	return nil
}

// chronoUTC writes t as Svix's server writes a time in a message: "2026-01-02 15:04:05.123456 UTC",
// the fraction left out when zero and otherwise of 3, 6 or 9 digits.
func chronoUTC(t time.Time) string {
	t = t.UTC()
	layout := "2006-01-02 15:04:05"
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1_000_000 == 0:
		layout += ".000"
	case ns%1_000 == 0:
		layout += ".000000"
	default:
		layout += ".000000000"
	}
	return t.Format(layout) + " UTC"
}
