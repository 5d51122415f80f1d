package ui

import (
	"net/http"
	"slices"

	"github.com/hookd/hookd"
)

// headerLine is one header of an attempt as the attempt page lists it.
type headerLine struct{ Name, Value string }

// headerLines lists h in name order, each value on its own line.
func headerLines(h http.Header) []headerLine {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	var out []headerLine
	for _, k := range names {
		for _, v := range h[k] {
			out = append(out, headerLine{k, v})
		}
	}
	return out
}

// attemptPage shows one attempt: the request as sent (URL, headers, body), the response (status,
// headers, body), its duration and trigger, and when the delivery's next attempt is due.
func (h *Handler) attemptPage(q *req) error {
	app, m, err := h.pathMessage(q)
	if err != nil {
		return err
	}
	a, err := h.client.GetAttempt(q.ctx, app.ID, m.ID, q.r.PathValue("attempt"))
	if err != nil {
		return err
	}
	var d *hookd.Delivery
	dl, err := h.client.ListDeliveries(q.ctx, app.ID, hookd.DeliveryFilter{MessageID: m.ID, EndpointID: a.EndpointID, ListOptions: hookd.ListOptions{Limit: 1}})
	if err != nil {
		return err
	}
	if len(dl.Data) > 0 {
		d = &dl.Data[0]
	}
	var ep *hookd.Endpoint
	if e, err := h.client.GetEndpoint(q.ctx, app.ID, a.EndpointID); err == nil {
		ep = e
	}
	payload, cut := renderPayload(m.Payload)
	h.render(q.w, q.r, http.StatusOK, "attempt", q.data(map[string]any{
		"Title": "Attempt " + a.ID, "App": app, "Message": m, "Attempt": a, "Delivery": d, "Endpoint": ep,
		"Envelope":       ep != nil && ep.Scheme == hookd.SchemeEnvelope,
		"RequestHeaders": headerLines(a.RequestHeaders.Header), "ResponseHeaders": headerLines(a.ResponseHeaders.Header),
		"Payload": payload, "PayloadCut": cut,
		"Expunged": a.Response == hookd.ExpungedResponse, "NoResponse": a.StatusCode == 0,
	}))
	return nil
}
