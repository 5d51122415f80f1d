package ui

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jsondepth"
	"github.com/hookd/hookd/internal/paging"
	"github.com/hookd/hookd/server"
)

// health is an endpoint at a glance.
type health struct {
	Endpoint    hookd.Endpoint
	Attempts    int     // in the last 24 h
	SuccessRate float64 // percent of Attempts; meaningful when Attempts > 0
	Circuit     hookd.CircuitState
}

// window is what the health figures and the charts cover: the hours the chart draws, the
// current one and the 23 before it.
const window = 24 * time.Hour

// windowStart is when the window begins: at the start of an hour, so that the figures read whole
// hours of the hourly counts and no attempt, and agree with the chart's bars.
func (h *Handler) windowStart() time.Time {
	return h.now().UTC().Truncate(time.Hour).Add(time.Hour - window)
}

// statsWindow is what an endpoint's stats cover: the API's default window.
const statsWindow = 28 * 24 * time.Hour

func (h *Handler) health(q *req, app string, ep hookd.Endpoint) (health, []hookd.HourCount, error) {
	hours, err := h.client.AttemptsPerHour(q.ctx, app, ep.ID, h.windowStart())
	if err != nil {
		return health{}, nil, err
	}
	return h.healthOf(ep, hookd.SumHours(hours)), hours, nil
}

// healthOf is ep's health with n attempts in the window.
func (h *Handler) healthOf(ep hookd.Endpoint, n hookd.AttemptCount) health {
	out := health{Endpoint: ep, Circuit: h.client.Circuit(ep.ID), Attempts: n.Succeeded + n.Failed}
	if out.Attempts > 0 {
		out.SuccessRate = 100 * float64(n.Succeeded) / float64(out.Attempts)
	}
	return out
}

// logRow is one row of an application's message log.
type logRow struct {
	Message  hookd.Message
	Delivery *hookd.Delivery // with a status filter: the delivery that matched
	Endpoint string          // with a status filter: the endpoint's URL, or its id when deleted
	// Counts is the message's deliveries by status, without a status filter.
	Counts hookd.DeliveryCounts
}

// logFilter is the message log's filters, as the form sends them.
type logFilter struct {
	Type, Status, From, To string
	from, to               *time.Time
}

func readLogFilter(r *http.Request) (logFilter, error) {
	v := r.URL.Query()
	f := logFilter{Type: strings.TrimSpace(v.Get("type")), Status: v.Get("status"), From: v.Get("from"), To: v.Get("to")}
	if f.Type != "" {
		if err := hookd.CheckEventTypeName("type", f.Type); err != nil {
			return f, err
		}
	}
	switch hookd.DeliveryStatus(f.Status) {
	case "", hookd.DeliveryPending, hookd.DeliveryDelivered, hookd.DeliveryFailed, hookd.DeliveryCancelled:
	default:
		return f, &hookd.ValidationError{Field: "status", Reason: "use pending, delivered, failed or cancelled"}
	}
	for _, t := range []struct {
		field, v string
		dst      **time.Time
	}{{"from", f.From, &f.from}, {"to", f.To, &f.to}} {
		if t.v == "" {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04", t.v)
		if err != nil {
			return f, &hookd.ValidationError{Field: t.field, Reason: "use a date and time, YYYY-MM-DDTHH:MM (UTC)"}
		}
		*t.dst = &at
	}
	return f, nil
}

// Query is the filters as a query string, for the pages' links (url.Values.Encode escapes every
// key and value, so the string is safe as a URL's query).
func (f logFilter) Query() template.URL {
	v := url.Values{}
	for k, x := range map[string]string{"type": f.Type, "status": f.Status, "from": f.From, "to": f.To} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return template.URL(v.Encode())
}

func (h *Handler) appPage(q *req) error {
	app, err := h.client.GetApplication(q.ctx, q.r.PathValue("app"))
	if err != nil {
		return err
	}
	eps, err := h.client.ListEndpoints(q.ctx, app.ID, hookd.ListOptions{Limit: 50})
	if err != nil {
		return err
	}
	ids := make([]string, len(eps.Data))
	for i, ep := range eps.Data {
		ids[i] = ep.ID
	}
	counts, err := h.client.AttemptsByEndpoint(q.ctx, app.ID, ids, h.windowStart())
	if err != nil {
		return err
	}
	var healths []health
	for _, ep := range eps.Data {
		healths = append(healths, h.healthOf(ep, counts[ep.ID]))
	}
	hours, err := h.client.AttemptsPerHour(q.ctx, app.ID, "", h.windowStart())
	if err != nil {
		return err
	}
	f, err := readLogFilter(q.r)
	if err != nil {
		return err
	}
	urls := make(map[string]string, len(eps.Data))
	for _, ep := range eps.Data {
		urls[ep.ID] = ep.URL
	}
	rows, next, prev, err := h.messageLog(q, app.ID, f, urls)
	if err != nil {
		return err
	}
	types, err := h.eventTypes(q)
	if err != nil {
		return err
	}
	h.render(q.w, q.r, http.StatusOK, "app", q.data(map[string]any{
		"Title": app.Name, "App": app, "Endpoints": healths, "MoreEndpoints": !eps.Done,
		"Chart": chart(hours, h.now(), window), "Log": rows, "Filter": f, "Next": next, "Prev": prev,
		"EventTypes": types, "Statuses": []string{"pending", "delivered", "failed", "cancelled"},
		"Flash": q.r.URL.Query().Get("flash"), "Refresh": liveEvery,
	}))
	return nil
}

// messageLog returns a page of the log: messages with their deliveries counted by status, or
// with a status, the deliveries in it. urls names endpoints by URL; an endpoint not in it is
// read.
func (h *Handler) messageLog(q *req, appID string, f logFilter, urls map[string]string) (rows []logRow, next, prev string, err error) {
	opts := listOptions(q.r)
	if f.Status != "" {
		page, err := h.client.ListDeliveries(q.ctx, appID, hookd.DeliveryFilter{Status: hookd.DeliveryStatus(f.Status), After: f.from, Before: f.to, ListOptions: opts})
		if err != nil {
			return nil, "", "", err
		}
		ids := make([]string, len(page.Data))
		for i, d := range page.Data {
			ids[i] = d.MessageID
		}
		msgs, err := h.client.GetMessages(q.ctx, appID, ids)
		if err != nil {
			return nil, "", "", err
		}
		for i := range page.Data {
			d := page.Data[i]
			m, ok := msgs[d.MessageID]
			if !ok {
				continue // deleted meanwhile
			}
			if f.Type != "" && m.EventType != f.Type {
				continue
			}
			rows = append(rows, logRow{Message: m, Delivery: &d, Endpoint: h.endpointURL(q, appID, d.EndpointID, urls)})
		}
		return rows, pageNext(page.Done, page.Iterator), page.PrevIterator, nil
	}
	mf := hookd.MessageFilter{After: f.from, Before: f.to, ListOptions: opts}
	if f.Type != "" {
		mf.EventTypes = []string{f.Type}
	}
	page, err := h.client.ListMessages(q.ctx, appID, mf)
	if err != nil {
		return nil, "", "", err
	}
	ids := make([]string, len(page.Data))
	for i, m := range page.Data {
		ids[i] = m.ID
	}
	counts, err := h.client.DeliveryCounts(q.ctx, appID, ids)
	if err != nil {
		return nil, "", "", err
	}
	for _, m := range page.Data {
		rows = append(rows, logRow{Message: m, Counts: counts[m.ID]})
	}
	return rows, pageNext(page.Done, page.Iterator), page.PrevIterator, nil
}

// endpointURL names endpoint id by its URL: from urls, else read (and kept in urls); a deleted
// endpoint keeps its id.
func (h *Handler) endpointURL(q *req, appID, id string, urls map[string]string) string {
	if u, ok := urls[id]; ok {
		return u
	}
	u := id
	if ep, err := h.client.GetEndpoint(q.ctx, appID, id); err == nil {
		u = ep.URL
	}
	urls[id] = u
	return u
}

func pageNext(done bool, it string) string {
	if done {
		return ""
	}
	return it
}

// eventTypes returns the first page of event types the token may see (server.Principal's
// SeesEventType): the portal's pickers offer no event type gated by a flag it does not hold.
func (h *Handler) eventTypes(q *req) ([]hookd.EventType, error) {
	page, err := h.client.ListEventTypes(q.ctx, false, hookd.ListOptions{Limit: 250})
	if err != nil {
		return nil, err
	}
	out := page.Data[:0]
	for i := range page.Data {
		if q.who.SeesEventType(&page.Data[i]) {
			out = append(out, page.Data[i])
		}
	}
	return out, nil
}

// maxNamedTypes is how many refused event types a page names; it counts the rest.
const maxNamedTypes = 20

// checkVisibleTypes refuses, as the API does, event types that do not exist, are archived, or are
// hidden from the token by their feature flags, all alike. The catalogue is read a page at a time,
// whatever the number of names the form holds.
func (h *Handler) checkVisibleTypes(q *req, names []string) error {
	if len(names) == 0 {
		return nil
	}
	visible := map[string]bool{}
	opts := hookd.ListOptions{Limit: paging.MaxLimit}
	for {
		page, err := h.client.ListEventTypes(q.ctx, false, opts)
		if err != nil {
			return err
		}
		for i := range page.Data {
			if q.who.SeesEventType(&page.Data[i]) {
				visible[page.Data[i].Name] = true
			}
		}
		if page.Done || page.Iterator == "" {
			break
		}
		opts.Iterator = page.Iterator
	}
	var missing []string
	seen := map[string]bool{}
	for _, n := range names {
		if !visible[n] && !seen[n] {
			seen[n] = true
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	reason := "The following event types don't exist: "
	if len(missing) > maxNamedTypes {
		reason += strings.Join(missing[:maxNamedTypes], ", ") + fmt.Sprintf(" (and %d more)", len(missing)-maxNamedTypes)
	} else {
		reason += strings.Join(missing, ", ")
	}
	return &hookd.ValidationError{Field: "eventTypes", Reason: reason}
}

func (h *Handler) addEndpoint(q *req) error {
	app := q.r.PathValue("app")
	if err := q.r.ParseForm(); err != nil {
		return &hookd.ValidationError{Field: "form", Reason: err.Error()}
	}
	if q.portal {
		if err := h.checkVisibleTypes(q, q.r.PostForm["eventTypes"]); err != nil {
			return err
		}
	}
	in := &hookd.EndpointIn{URL: strings.TrimSpace(q.r.PostFormValue("url")), Description: q.r.PostFormValue("description"),
		EventTypes: q.r.PostForm["eventTypes"], Scheme: hookd.SignatureScheme(q.r.PostFormValue("scheme"))}
	ep, err := h.client.CreateEndpoint(q.ctx, app, in)
	if err != nil {
		return err
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"/endpoint/"+url.PathEscape(ep.ID)+"?flash=created", http.StatusSeeOther)
	return nil
}

func (h *Handler) sendExample(q *req) error {
	app := q.r.PathValue("app")
	typ := strings.TrimSpace(q.r.PostFormValue("eventType"))
	payload := strings.TrimSpace(q.r.PostFormValue("payload"))
	if payload == "" {
		payload = `{"example":true}`
	}
	if !json.Valid([]byte(payload)) {
		return &hookd.ValidationError{Field: "payload", Reason: "is not valid JSON"}
	}
	// The portal's form is the API's way in for its holder: the API's bound on depth holds.
	if jsondepth.Depth([]byte(payload), jsondepth.MaxPayload) > jsondepth.MaxPayload {
		return &hookd.ValidationError{Field: "payload", Reason: fmt.Sprintf("nests deeper than %d levels", jsondepth.MaxPayload)}
	}
	res, err := h.client.Send(q.ctx, app, &hookd.MessageIn{EventType: typ, Payload: json.RawMessage(payload)})
	if err != nil {
		return err
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"/msg/"+url.PathEscape(res.Message.ID), http.StatusSeeOther)
	return nil
}

func (h *Handler) endpointPage(q *req) error {
	return h.showEndpoint(q, "")
}

// showEndpoint renders an endpoint's page; secret, when set, is shown (after "reveal").
func (h *Handler) showEndpoint(q *req, secret string) error {
	app, ep, err := h.pathEndpoint(q)
	if err != nil {
		return err
	}
	hl, hours, err := h.health(q, app.ID, *ep)
	if err != nil {
		return err
	}
	attempts, err := h.client.ListAttempts(q.ctx, app.ID, hookd.AttemptFilter{EndpointID: ep.ID, ListOptions: listOptions(q.r)})
	if err != nil {
		return err
	}
	now := h.now()
	stats, err := h.client.Store().EndpointStats(q.ctx, ep.ID, now.Add(-statsWindow), now)
	if err != nil {
		return err
	}
	types, err := h.eventTypes(q)
	if err != nil {
		return err
	}
	h.render(q.w, q.r, http.StatusOK, "endpoint", q.data(map[string]any{
		"Title": ep.URL, "App": app, "Health": hl, "Chart": chart(hours, h.now(), window), "Attempts": attempts,
		"Secret": secret, "Flash": q.r.URL.Query().Get("flash"), "Refresh": refreshUnless(secret != ""),
		"Stats": stats, "StatsDays": int(statsWindow / (24 * time.Hour)), "EventTypes": types, "Ping": server.PingEventType,
		"RecoverFrom": h.now().UTC().Add(-time.Hour).Format("2006-01-02T15:04"),
	}))
	return nil
}

func (h *Handler) endpointAction(q *req) error {
	app, ep := q.r.PathValue("app"), q.r.PathValue("ep")
	flash := ""
	switch q.r.PathValue("action") {
	case "disable":
		if err := h.client.SetEndpointDisabled(q.ctx, app, ep, true, "disabled from the "+siteName(q.site)); err != nil {
			return err
		}
		flash = "disabled"
	case "enable":
		if err := h.client.SetEndpointDisabled(q.ctx, app, ep, false, ""); err != nil {
			return err
		}
		flash = "enabled"
	case "rotate":
		if _, err := h.client.RotateSecret(q.ctx, app, ep, ""); err != nil {
			return err
		}
		flash = "rotated"
	case "scheme":
		scheme := hookd.SignatureScheme(q.r.PostFormValue("scheme"))
		if _, err := h.client.EditEndpoint(q.ctx, app, ep, func(in *hookd.EndpointIn) error {
			in.Scheme = scheme
			return nil
		}); err != nil {
			return err
		}
		flash = "signed with " + string(scheme)
	case "reveal":
		secret, err := h.client.EndpointSecret(q.ctx, app, ep)
		if err != nil {
			return err
		}
		return h.showEndpoint(q, secret)
	case "recover":
		since, err := time.Parse("2006-01-02T15:04", q.r.PostFormValue("since"))
		if err != nil {
			return &hookd.ValidationError{Field: "since", Reason: "use a date and time, YYYY-MM-DDTHH:MM (UTC)"}
		}
		n, err := h.client.Recover(q.ctx, app, ep, since)
		if err != nil {
			return err
		}
		flash = fmt.Sprintf("recovering %d", n)
	default:
		h.fail(q.w, q.r, http.StatusNotFound, "No such action.")
		return nil
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"/endpoint/"+url.PathEscape(ep)+"?flash="+url.QueryEscape(flash), http.StatusSeeOther)
	return nil
}

// refreshUnless is liveEvery, or 0 (no reload) when shown is true: a page showing a secret
// once is not reloaded, which would show it again.
func refreshUnless(shown bool) int {
	if shown {
		return 0
	}
	return liveEvery
}

func siteName(s site) string {
	if s.portal {
		return "portal"
	}
	return "dashboard"
}

// attemptsShown bounds the attempts the message page shows for one destination.
const attemptsShown = 50

// messageAttempts returns the attempts of message msgID by endpoint id, newest first, at most
// attemptsShown each: every attempt of the message, read the longest page at a time, rather than
// one list per destination.
func (h *Handler) messageAttempts(q *req, appID, msgID string) (map[string][]hookd.Attempt, error) {
	out := map[string][]hookd.Attempt{}
	opts := hookd.ListOptions{Limit: paging.MaxLimit}
	for {
		page, err := h.client.ListAttempts(q.ctx, appID, hookd.AttemptFilter{MessageID: msgID, ListOptions: opts})
		if err != nil {
			return nil, err
		}
		for _, a := range page.Data {
			if len(out[a.EndpointID]) < attemptsShown {
				out[a.EndpointID] = append(out[a.EndpointID], a)
			}
		}
		if page.Done {
			return out, nil
		}
		opts.Iterator = page.Iterator
	}
}

// destination is one endpoint of a message with its attempts.
type destination struct {
	hookd.MessageDestination
	Attempts []hookd.Attempt
}

func (h *Handler) messagePage(q *req) error {
	app, m, err := h.pathMessage(q)
	if err != nil {
		return err
	}
	dests, err := h.client.ListMessageDestinations(q.ctx, app.ID, m.ID, hookd.ListOptions{Limit: 100})
	if err != nil {
		return err
	}
	atts, err := h.messageAttempts(q, app.ID, m.ID)
	if err != nil {
		return err
	}
	var out []destination
	for _, d := range dests.Data {
		out = append(out, destination{MessageDestination: d, Attempts: atts[d.Delivery.EndpointID]})
	}
	payload, cut := renderPayload(m.Payload)
	h.render(q.w, q.r, http.StatusOK, "msgpage", q.data(map[string]any{
		"Title": m.EventType, "App": app, "Message": m, "Payload": payload, "PayloadCut": cut, "Destinations": out,
		"Flash": q.r.URL.Query().Get("flash"), "Refresh": liveEvery,
	}))
	return nil
}

func (h *Handler) resend(q *req) error {
	app, msg, ep := q.r.PathValue("app"), q.r.PathValue("msg"), q.r.PathValue("ep")
	if err := h.client.Resend(q.ctx, app, msg, ep); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(app)+"/msg/"+url.PathEscape(msg)+"?flash=resent", http.StatusSeeOther)
	return nil
}

// liveEvery is how often, in seconds, the pages with lists reload themselves while shown.
const liveEvery = 15

// pathEndpoint reads the application and the endpoint the request's path names ({app}, {ep}).
func (h *Handler) pathEndpoint(q *req) (*hookd.Application, *hookd.Endpoint, error) {
	app, err := h.client.GetApplication(q.ctx, q.r.PathValue("app"))
	if err != nil {
		return nil, nil, err
	}
	ep, err := h.client.GetEndpoint(q.ctx, app.ID, q.r.PathValue("ep"))
	if err != nil {
		return nil, nil, err
	}
	return app, ep, nil
}

// pathMessage reads the application and the message the request's path names ({app}, {msg}).
func (h *Handler) pathMessage(q *req) (*hookd.Application, *hookd.Message, error) {
	app, err := h.client.GetApplication(q.ctx, q.r.PathValue("app"))
	if err != nil {
		return nil, nil, err
	}
	m, err := h.client.GetMessage(q.ctx, app.ID, q.r.PathValue("msg"))
	if err != nil {
		return nil, nil, err
	}
	return app, m, nil
}
