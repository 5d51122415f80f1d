package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// Bounds of the endpoint form's free text.
const (
	maxFormHeaders  = 50
	maxFormChannels = 10
	maxRateLimit    = 1 << 20
)

// headerLinesOf writes an endpoint's headers for the form, one "Name: value" a line, in name
// order, each value as hookd.Redacted: the page never shows the tenant's credentials, and a line
// left as it is keeps its value (formHeaders).
func headerLinesOf(h map[string]string) string {
	names := slices.Sorted(maps.Keys(h))
	var b strings.Builder
	for _, k := range names {
		b.WriteString(k + ": " + hookd.Redacted + "\n")
	}
	return b.String()
}

// formHeaders reads the form's headers, one "Name: value" a line; a value of hookd.Redacted keeps
// the current value of that header.
func formHeaders(text string, current map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return nil, &hookd.ValidationError{Field: "headers", Reason: fmt.Sprintf("line %d: write each header as Name: value", i+1)}
		}
		if value == hookd.Redacted {
			v, kept := lookupFold(current, name)
			if !kept {
				return nil, &hookd.ValidationError{Field: "headers", Reason: fmt.Sprintf("line %d: %s has no value to keep: type one", i+1, name)}
			}
			value = v
		}
		out[name] = value
		if len(out) > maxFormHeaders {
			return nil, &hookd.ValidationError{Field: "headers", Reason: fmt.Sprintf("at most %d headers", maxFormHeaders)}
		}
	}
	return out, nil
}

// lookupFold finds a header by name in any case.
func lookupFold(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// formList reads a comma- or space-separated list.
func formList(field, text string, max int) ([]string, error) {
	out := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
	if len(out) > max {
		return nil, &hookd.ValidationError{Field: field, Reason: fmt.Sprintf("at most %d", max)}
	}
	return out, nil
}

// editEndpointForm shows the endpoint's edit form.
func (h *Handler) editEndpointForm(q *req) error {
	app, ep, err := h.pathEndpoint(q)
	if err != nil {
		return err
	}
	types, err := h.eventTypes(q)
	if err != nil {
		return err
	}
	h.render(q.w, q.r, http.StatusOK, "endpoint-edit", q.data(map[string]any{
		"Title": "Edit " + ep.URL, "App": app, "Endpoint": ep, "EventTypes": types,
		"Channels": strings.Join(ep.Channels, ", "), "Headers": headerLinesOf(ep.Headers),
	}))
	return nil
}

// formSchedule writes a retry schedule as the edit form takes it: "5s,1m0s", "none" for no
// retries, "" for inherit.
func formSchedule(s []time.Duration) string {
	switch {
	case s == nil:
		return ""
	case len(s) == 0:
		return "none"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// formPolicy reads the edit form's retry policy and ordering onto in; a field the form leaves out
// stays.
// Empty inherits (the application's, else the server's).
func formPolicy(f url.Values, in *hookd.EndpointIn) error {
	if f.Has("retrySchedule") {
		v := strings.TrimSpace(f.Get("retrySchedule"))
		switch strings.ToLower(v) {
		case "":
			in.RetrySchedule = nil
		case "none":
			in.RetrySchedule = []time.Duration{}
		default:
			in.RetrySchedule = []time.Duration{}
			for part := range strings.SplitSeq(v, ",") {
				d, err := time.ParseDuration(strings.TrimSpace(part))
				if err != nil || d < 0 {
					return &hookd.ValidationError{Field: "retrySchedule", Reason: fmt.Sprintf("%q is not a wait: use waits apart by commas (5s,1m,10m), none, or leave it empty for the application's", part)}
				}
				in.RetrySchedule = append(in.RetrySchedule, d)
			}
		}
	}
	if f.Has("ordered") {
		switch f.Get("ordered") {
		case "on":
			in.Ordered = true
		case "off":
			in.Ordered = false
		default:
			return &hookd.ValidationError{Field: "ordered", Reason: fmt.Sprintf("%q is neither on nor off", f.Get("ordered"))}
		}
	}
	if f.Has("attemptTimeout") {
		in.AttemptTimeout = 0
		if v := strings.TrimSpace(f.Get("attemptTimeout")); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return &hookd.ValidationError{Field: "attemptTimeout", Reason: fmt.Sprintf("%q is not a duration above zero (e.g. 10s); leave it empty for the application's", v)}
			}
			in.AttemptTimeout = d
		}
	}
	return nil
}

// editEndpoint applies the edit form: URL, description, event types, channels, rate limit,
// headers, signing scheme, retry policy and ordering.
func (h *Handler) editEndpoint(q *req) error {
	app, epID := q.r.PathValue("app"), q.r.PathValue("ep")
	if err := q.r.ParseForm(); err != nil {
		return &hookd.ValidationError{Field: "form", Reason: err.Error()}
	}
	f := q.r.PostForm
	types := f["eventTypes"]
	if err := h.checkVisibleTypes(q, types); err != nil { // as the API refuses them
		return err
	}
	channels, err := formList("channels", f.Get("channels"), maxFormChannels)
	if err != nil {
		return err
	}
	rate := 0
	if s := strings.TrimSpace(f.Get("rateLimit")); s != "" {
		if rate, err = strconv.Atoi(s); err != nil || rate < 0 || rate > maxRateLimit {
			return &hookd.ValidationError{Field: "rateLimit", Reason: fmt.Sprintf("use a whole number of messages a second, 0 to %d (empty or 0: the application's)", maxRateLimit)}
		}
	}
	_, err = h.client.EditEndpoint(q.ctx, app, epID, func(in *hookd.EndpointIn) error {
		headers, err := formHeaders(f.Get("headers"), in.Headers)
		if err != nil {
			return err
		}
		in.URL, in.Description = strings.TrimSpace(f.Get("url")), f.Get("description")
		in.EventTypes, in.Channels, in.RateLimit, in.Headers = types, channels, rate, headers
		in.Scheme = hookd.SignatureScheme(f.Get("scheme"))
		return formPolicy(f, in)
	})
	var ve *hookd.ValidationError
	if errors.As(err, &ve) && ve.Field == "timeoutSeconds" { // the library's name; the form's is attemptTimeout
		return &hookd.ValidationError{Field: "attemptTimeout", Reason: ve.Reason}
	}
	if err != nil {
		return err
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"/endpoint/"+url.PathEscape(epID)+"?flash=saved", http.StatusSeeOther)
	return nil
}

// deleteEndpointForm asks whether to delete the endpoint.
func (h *Handler) deleteEndpointForm(q *req) error {
	app, ep, err := h.pathEndpoint(q)
	if err != nil {
		return err
	}
	h.render(q.w, q.r, http.StatusOK, "endpoint-delete", q.data(map[string]any{"Title": "Delete " + ep.URL, "App": app, "Endpoint": ep}))
	return nil
}

// deleteEndpoint deletes the endpoint once the confirmation page's form says so.
func (h *Handler) deleteEndpoint(q *req) error {
	app, epID := q.r.PathValue("app"), q.r.PathValue("ep")
	if q.r.PostFormValue("confirm") != "delete" {
		return &hookd.ValidationError{Field: "confirm", Reason: "confirm on the endpoint's delete page"}
	}
	if err := h.client.DeleteEndpoint(q.ctx, app, epID); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"?flash="+url.QueryEscape("endpoint deleted"), http.StatusSeeOther)
	return nil
}

// sendTestEvent sends an event of the chosen type to this endpoint alone, as the API's
// send-example does: the payload is the example of the event type's newest schema, or a small
// stand-in.
func (h *Handler) sendTestEvent(q *req) error {
	app, epID := q.r.PathValue("app"), q.r.PathValue("ep")
	typ := strings.TrimSpace(q.r.PostFormValue("eventType"))
	if typ == "" {
		return &hookd.ValidationError{Field: "eventType", Reason: "choose an event type"}
	}
	payload := json.RawMessage(`{"success":true}`)
	if typ != server.PingEventType {
		if err := hookd.CheckEventTypeName("eventType", typ); err != nil {
			return err
		}
		if err := h.checkVisibleTypes(q, []string{typ}); err != nil {
			return err
		}
		payload, _ = json.Marshal(map[string]any{"eventType": typ, "example": true})
		if et, err := h.client.GetEventType(q.ctx, typ); err == nil {
			if ex := server.SchemaExample(et.Schemas); ex != nil {
				payload = ex
			}
		}
	}
	m, err := h.client.SendToEndpoint(q.ctx, app, epID, &hookd.MessageIn{EventType: typ, Payload: payload})
	if err != nil {
		return err
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"/msg/"+url.PathEscape(m.ID)+"?flash="+url.QueryEscape("test event sent"), http.StatusSeeOther)
	return nil
}
