package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// msgIn is Svix's MessageIn. Both generations share it; today's adds application. The payload
// may come as data, the alias Svix's server reads too; both at once is a duplicate field.
type msgIn struct {
	EventID   *string         `json:"eventId"`
	EventType *string         `json:"eventType"`
	Payload   json.RawMessage `json:"payload"`
	Data      json.RawMessage `json:"data"`
	Channels  []string        `json:"channels"`
	// PayloadRetentionPeriod is how long the payload is kept, in days: 5 to 90, default 90 (Svix's
	// server). PayloadRetentionHours (Svix Cloud's, 1 to 2160) says it in hours instead; the two
	// exclude each other.
	PayloadRetentionPeriod *int64 `json:"payloadRetentionPeriod"`
	PayloadRetentionHours  *int64 `json:"payloadRetentionHours"`
	// Tags (Svix Cloud's) label the message for the list's tag filter.
	Tags []string `json:"tags"`
	// Application creates the application of the path when it does not exist.
	Application *msgAppIn `json:"application"`
	// TransformationsParams carries rawPayload, the payload as a string (the Go SDK's
	// NewMessageInRaw); it is sent as it is and must be JSON.
	TransformationsParams *struct {
		RawPayload *string `json:"rawPayload"`
	} `json:"transformationsParams"`
}

// msgAppIn is the ApplicationIn inside a MessageIn: throttleRate today, rateLimit in 1.44.
type msgAppIn struct {
	Name         *string           `json:"name"`
	UID          *string           `json:"uid"`
	ThrottleRate *int              `json:"throttleRate"`
	RateLimit    *int              `json:"rateLimit"`
	Metadata     map[string]string `json:"metadata"`
}

// maxMsgChannels is the most channels a message may name (both specs).
const maxMsgChannels = 5

// msgIDPrefix begins every message id; an eventId may not begin with it, as Svix refuses a uid
// of its kind's id prefix.
const msgIDPrefix = "msg_"

// check validates the message as both specs do and returns what to send.
func (in *msgIn) check() (*hookd.MessageIn, error) {
	if in.EventType == nil {
		return nil, invalidField("body", "eventType", "field required")
	}
	if err := checkSvixName("body", "eventType", *in.EventType); err != nil {
		return nil, err
	}
	out := &hookd.MessageIn{EventType: *in.EventType}
	if in.EventID != nil {
		if err := checkUID("eventId", *in.EventID, ""); err != nil {
			return nil, err
		}
		if strings.HasPrefix(*in.EventID, msgIDPrefix) {
			return nil, invalidField("body", "eventId", "Uids are not allowed to have the same prefix as the ID. Prefix with _?")
		}
		out.EventID = *in.EventID
	}
	if in.Channels != nil {
		chs, err := checkMsgChannels(in.Channels)
		if err != nil {
			return nil, err
		}
		out.Channels = chs
	}
	if in.Tags != nil {
		tags, err := checkMsgTags(in.Tags)
		if err != nil {
			return nil, err
		}
		out.Tags = tags
	}
	retention, err := in.retention()
	if err != nil {
		return nil, err
	}
	out.PayloadRetention = retention
	if in.Payload != nil && in.Data != nil {
		return nil, invalidField("body", "payload", "duplicate field `payload`: data is its alias, send one of them")
	}
	payload := bytes.TrimSpace(in.Payload)
	if in.Data != nil {
		payload = bytes.TrimSpace(in.Data)
	}
	if len(payload) == 0 || bytes.Equal(payload, []byte("null")) {
		return nil, invalidField("body", "payload", "field required")
	}
	if payload[0] != '{' {
		return nil, invalidField("body", "payload", "must be a JSON object")
	}
	if err := checkPayloadDepth("payload", payload); err != nil {
		return nil, err
	}
	if tp := in.TransformationsParams; tp != nil && tp.RawPayload != nil {
		raw := []byte(*tp.RawPayload)
		if !json.Valid(raw) {
			return nil, invalidField("body", "transformationsParams.rawPayload", "must be JSON: hookd sends JSON payloads only")
		}
		if bytes.TrimLeft(raw, " \t\r\n")[0] != '{' {
			return nil, invalidField("body", "transformationsParams.rawPayload", "must be a JSON object, as payload is")
		}
		if err := checkPayloadDepth("transformationsParams.rawPayload", raw); err != nil {
			return nil, err
		}
		payload = raw
	}
	out.Payload = json.RawMessage(payload)
	if in.Application != nil {
		if err := in.Application.check(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Payload retention as Svix bounds it: days (its server's), or hours (its cloud's).
const (
	defaultRetentionDays       = 90
	minRetentionDays           = 5
	maxRetentionDays           = 90
	maxRetentionHours          = 2160
	maxMsgTags                 = 5
	maxMsgTagLen               = 128
	msgTagPatternText          = `^[a-zA-Z0-9\-_./\\#]+$`
	retentionMutuallyExclusive = "payloadRetentionPeriod and payloadRetentionHours are mutually exclusive"
)

// msgTagPattern is the pattern of a message tag (Svix Cloud's).
var msgTagPattern = regexp.MustCompile(msgTagPatternText)

// retention returns how long the payload is kept.
func (in *msgIn) retention() (time.Duration, error) {
	days, hours := in.PayloadRetentionPeriod, in.PayloadRetentionHours
	switch {
	case days != nil && hours != nil:
		return 0, invalidField("body", "payloadRetentionHours", retentionMutuallyExclusive)
	case hours != nil:
		if *hours < 1 || *hours > maxRetentionHours {
			return 0, invalidField("body", "payloadRetentionHours", "must be from 1 to 2160 (hours)")
		}
		return time.Duration(*hours) * time.Hour, nil
	case days != nil:
		if *days < minRetentionDays || *days > maxRetentionDays {
			return 0, invalidField("body", "payloadRetentionPeriod", "must be from 5 to 90 (days)")
		}
		return time.Duration(*days) * 24 * time.Hour, nil
	}
	return defaultRetentionDays * 24 * time.Hour, nil
}

// checkMsgTags checks a message's tags: at most 5 of at most 128 characters of
// [a-zA-Z0-9-_./\#]. Repeats are dropped, as the list is a set.
func checkMsgTags(tags []string) ([]string, error) {
	seen := make(map[string]bool, min(len(tags), maxMsgTags+1))
	out := []string{}
	for _, tag := range tags {
		if err := checkMsgTag("body", "tags", tag); err != nil {
			return nil, err
		}
		if !seen[tag] {
			seen[tag] = true
			out = append(out, tag)
		}
		if len(out) > maxMsgTags {
			return nil, invalidField("body", "tags", "at most 5 items")
		}
	}
	return out, nil
}

// checkMsgTag checks one tag, in the body or the query.
func checkMsgTag(where, field, tag string) error {
	switch {
	case tag == "":
		return invalidField(where, field, "must not be empty")
	case len(tag) > maxMsgTagLen:
		return invalidField(where, field, "at most 128 characters")
	case !msgTagPattern.MatchString(tag):
		return invalidField(where, field, "must match "+msgTagPatternText)
	}
	return nil
}

// queryTag reads the tag filter.
func queryTag(r *http.Request) (string, error) {
	tag := r.URL.Query().Get("tag")
	if tag == "" {
		return "", nil
	}
	return tag, checkMsgTag("query", "tag", tag)
}

// checkMsgChannels checks a message's channels: 1 to 5 names of at most 128 characters of
// [a-zA-Z0-9-_.]. Repeats are dropped, as Svix reads them into a set.
func checkMsgChannels(chs []string) ([]string, error) {
	var out []string
	for _, ch := range chs {
		if err := checkMsgName("channels", ch, 128); err != nil {
			return nil, err
		}
		if !slices.Contains(out, ch) {
			out = append(out, ch)
		}
		if len(out) > maxMsgChannels {
			break
		}
	}
	if len(out) < 1 || len(out) > maxMsgChannels {
		return nil, invalidField("body", "channels", "must have 1 to 5 items, or be null")
	}
	return out, nil
}

// checkMsgName checks a name of the pattern ^[a-zA-Z0-9\-_.]+$ with at most max characters.
func checkMsgName(field, v string, max int) error {
	switch {
	case v == "":
		return invalidField("body", field, "must not be empty")
	case len(v) > max:
		return invalidField("body", field, "at most "+strconv.Itoa(max)+" characters")
	case !svixID.MatchString(v):
		return invalidField("body", field, "must match ^[a-zA-Z0-9\\-_.]+$")
	}
	return nil
}

// check validates an inline application as ApplicationIn. Its uid is checked against the path
// only when the application is created (createMessage), as Svix does.
func (a *msgAppIn) check() error {
	if a.Name == nil || *a.Name == "" {
		return invalidField("body", "application.name", "field required")
	}
	if a.UID != nil {
		if err := checkUID("application.uid", *a.UID, appIDPrefix); err != nil {
			return err
		}
	}
	for _, r := range []struct {
		name string
		v    *int
	}{{"application.throttleRate", a.ThrottleRate}, {"application.rateLimit", a.RateLimit}} {
		if r.v != nil && (*r.v < 1 || *r.v > 65535) {
			return invalidField("body", r.name, "must be from 1 to 65535")
		}
	}
	return nil
}

// toHookd returns the application to create; the caller has checked that UID is set.
func (a *msgAppIn) toHookd() *hookd.ApplicationIn {
	in := &hookd.ApplicationIn{Name: *a.Name, UID: *a.UID, Metadata: a.Metadata}
	switch {
	case a.ThrottleRate != nil:
		in.ThrottleRate = *a.ThrottleRate
	case a.RateLimit != nil:
		in.ThrottleRate = *a.RateLimit
	}
	return in
}

// msgOut is Svix's MessageOut, the same in both generations.
type msgOut struct {
	EventID   *string         `json:"eventId"`
	EventType string          `json:"eventType"`
	Payload   json.RawMessage `json:"payload"`
	Channels  []string        `json:"channels"`
	ID        string          `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	// Tags is left out when there are none, as Svix's server (which has no tags) writes it.
	Tags []string `json:"tags,omitempty"`
}

// expiredPayload stands for a payload that expired or was expunged, as Svix shows it.
var expiredPayload = json.RawMessage(`{"expired":true}`)

// errMissingPayload is Svix's answer to a resend of a message whose payload expired.
var errMissingPayload = badRequest("missing_payload", "Unable to resend message. Payload is missing (probably expired).")

// toMsgOut returns the message as Svix shows it. The timestamp is cut to the microsecond, as the
// store keeps it, so that a message just created reads as it reads back later (and before and
// after filters given its timestamp find it).
func toMsgOut(m *hookd.Message, withContent bool) msgOut {
	out := msgOut{
		EventID: nullString(m.EventID), EventType: m.EventType, Channels: nullList(m.Channels),
		ID: m.ID, Timestamp: m.CreatedAt.UTC().Truncate(time.Microsecond), Tags: m.Tags,
	}
	switch {
	case !withContent:
		out.Payload = json.RawMessage(`{}`)
	case len(m.Payload) == 0 || bytes.Equal(m.Payload, []byte("null")):
		out.Payload = expiredPayload
	default:
		out.Payload = m.Payload
	}
	return out
}

// endpointMsgOut is today's EndpointMessageOut: a message with the state of its delivery to one
// endpoint.
type endpointMsgOut struct {
	msgOut
	Status      msgStatus  `json:"status"`
	StatusText  string     `json:"statusText"`
	NextAttempt *time.Time `json:"nextAttempt"`
}

// endpointMsgOutV144 is EndpointMessageOut of the 1.44 generation: no statusText.
type endpointMsgOutV144 struct {
	msgOut
	Status      msgStatus  `json:"status"`
	NextAttempt *time.Time `json:"nextAttempt"`
}

func toEndpointMsgOut(gen generation, em *hookd.EndpointMessage, withContent bool) any {
	st := deliveryStatus(&em.Delivery)
	next := utcOrNil(em.Delivery.NextAttemptAt)
	if em.Delivery.Status != hookd.DeliveryPending {
		next = nil
	}
	m := toMsgOut(&em.Message, withContent)
	if gen == genV144 {
		return endpointMsgOutV144{msgOut: m, Status: st, NextAttempt: next}
	}
	return endpointMsgOut{msgOut: m, Status: st, StatusText: st.text(), NextAttempt: next}
}

// queryEventTypeSet reads the event_types filter: repeated (event_types=a&event_types=b, as the
// SDKs send it), with brackets (event_types[]=a), or comma separated; at most maxNameList
// distinct names.
func queryEventTypeSet(r *http.Request) ([]string, error) {
	q := r.URL.Query()
	var out []string
	seen := map[string]bool{}
	for _, key := range []string{"event_types", "event_types[]"} {
		for _, v := range q[key] {
			for et := range strings.SplitSeq(v, ",") {
				if et == "" {
					continue
				}
				if err := checkSvixName("query", "event_types", et); err != nil {
					return nil, err
				}
				if !seen[et] {
					seen[et] = true
					out = append(out, et)
				}
				if len(out) > maxNameList {
					return nil, invalidField("query", "event_types", tooManyNames)
				}
			}
		}
	}
	return out, nil
}

// queryChannelName reads the channel filter.
func queryChannelName(r *http.Request) (string, error) {
	ch := r.URL.Query().Get("channel")
	if ch != "" && (len(ch) > 128 || !svixID.MatchString(ch)) {
		return "", invalidField("query", "channel", "must match ^[a-zA-Z0-9\\-_.]+$, at most 128 characters")
	}
	return ch, nil
}

// queryBeforeAfter reads before and after.
func queryBeforeAfter(r *http.Request) (before, after *time.Time, err error) {
	if before, err = queryTime(r, "before"); err != nil {
		return nil, nil, err
	}
	if after, err = queryTime(r, "after"); err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// nullString is nil for "" (written as null).
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// nullList is nil for an empty list (written as null, as Svix writes an unset filter).
func nullList(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	return v
}

// utcOrNil is t in UTC, nil for nil.
func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
