package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/hookd/hookd"
)

// emptyAttemptList is a list with nothing in it.
var emptyAttemptList = listOut[any]{Data: []any{}, Done: true}

// listEndpointAttempts lists an endpoint's attempts across messages.
func (s *Server) listEndpointAttempts(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	return s.listAttempts(w, r, rc, "", r.PathValue("endpoint_id"))
}

// listMessageAttempts lists a message's attempts, of one endpoint when the query names it.
func (s *Server) listMessageAttempts(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	return s.listAttempts(w, r, rc, r.PathValue("msg_id"), r.URL.Query().Get("endpoint_id"))
}

// listMessageEndpointAttempts lists a message's attempts at the endpoint the path names.
func (s *Server) listMessageEndpointAttempts(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	return s.listAttempts(w, r, rc, r.PathValue("msg_id"), r.PathValue("endpoint_id"))
}

// listAttempts lists attempts newest first, of a message, of an endpoint, or of both (msgID,
// endpointID: id, uid or eventId; "" for any), filtered by status, status_code_class,
// event_types, channel, before and after. With with_msg (Svix Cloud's) each attempt carries its
// message.
func (s *Server) listAttempts(w http.ResponseWriter, r *http.Request, rc *reqCtx, msgID, endpointID string) error {
	q, err := readListQuery(r, iterateAttempts, filterStatus|filterCodeClass)
	if err != nil {
		return err
	}
	withMsg, err := queryBool(r, "with_msg", false)
	if err != nil {
		return err
	}
	ctx := r.Context()
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	f := hookd.AttemptFilter{EventTypes: q.eventTypes, Channel: q.channel, Before: q.before, After: q.after, FromAfter: true, ListOptions: q.opts}
	if msgID != "" {
		m, err := s.client.GetMessage(ctx, a.ID, msgID)
		if err != nil {
			return err
		}
		f.MessageID = m.ID
	}
	if endpointID != "" {
		ep, err := s.client.GetEndpoint(ctx, a.ID, endpointID)
		if err != nil {
			return err
		}
		f.EndpointID = ep.ID
	}
	if q.status != nil {
		switch *q.status {
		case msgSuccess, msgFail:
			ok := *q.status == msgSuccess
			f.Success = &ok
		default:
			// Every attempt has ended: none is pending or sending.
			writeJSON(w, http.StatusOK, emptyAttemptList)
			return nil
		}
	}
	var page *hookd.Page[hookd.Attempt]
	if q.codeClass < 0 {
		page, err = s.client.ListAttempts(ctx, a.ID, f)
	} else {
		fetch := func(o hookd.ListOptions) (*hookd.Page[hookd.Attempt], error) {
			g := f
			g.ListOptions = o
			return s.client.ListAttempts(ctx, a.ID, g)
		}
		page, err = walkList(storeBatches(fetch, false, ""), q.opts,
			func(at *hookd.Attempt) bool { return inStatusCodeClass(at.StatusCode, q.codeClass) },
			func(at *hookd.Attempt) string { return at.ID })
	}
	if err != nil {
		return err
	}
	msgs := map[string]*msgOut{}
	if withMsg {
		if msgs, err = s.attemptMessages(ctx, a.ID, page.Data); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, toList(page, func(at *hookd.Attempt) any {
		return toAttemptOut(rc.gen, at, q.withContent, msgs[at.MessageID])
	}))
	return nil
}

// attemptMessages reads the messages of attempts in one read, as with_msg shows them: without
// their payloads ({}), as Svix documents.
func (s *Server) attemptMessages(ctx context.Context, appID string, attempts []hookd.Attempt) (map[string]*msgOut, error) {
	ids := make([]string, 0, len(attempts))
	seen := make(map[string]bool, len(attempts))
	for _, at := range attempts {
		if !seen[at.MessageID] {
			seen[at.MessageID] = true
			ids = append(ids, at.MessageID)
		}
	}
	msgs, err := s.client.GetMessages(ctx, appID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*msgOut, len(msgs))
	for id, m := range msgs {
		mo := toMsgOut(&m, false)
		out[id] = &mo
	}
	return out, nil
}

// getAttempt is v1.message-attempt.get.
func (s *Server) getAttempt(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	at, err := s.client.GetAttempt(r.Context(), a.ID, r.PathValue("msg_id"), r.PathValue("attempt_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAttemptOut(rc.gen, at, true, nil))
	return nil
}

// expungeAttemptContent is v1.message-attempt.expunge-content: the captured response body is
// replaced by "EXPUNGED", as Svix's server does, 204.
func (s *Server) expungeAttemptContent(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	if err := s.client.ExpungeAttemptContent(r.Context(), a.ID, r.PathValue("msg_id"), r.PathValue("attempt_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listAttemptedDestinations is v1.message-attempt.list-attempted-destinations: the endpoints the
// message went to, with the state of each delivery, in the order the deliveries were made.
// Deliveries to endpoints deleted since are left out.
func (s *Server) listAttemptedDestinations(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	opts, err := listOptions(r, iterateAny)
	if err != nil {
		return err
	}
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	page, err := s.client.ListMessageDestinations(r.Context(), a.ID, r.PathValue("msg_id"), opts)
	if err != nil {
		return err
	}
	page.Data = slices.DeleteFunc(page.Data, func(d hookd.MessageDestination) bool { return d.Endpoint == nil })
	writeJSON(w, http.StatusOK, toList(page, func(d *hookd.MessageDestination) any {
		return toMsgEndpointOut(rc.gen, &d.Delivery, d.Endpoint)
	}))
	return nil
}

// deliveryEnd sorts after every delivery id: a walk of deliveries newest first starts there.
var deliveryEnd = "dlv_" + strings.Repeat("z", 23)

// listAttemptedMessages is v1.message-attempt.list-attempted-messages: the messages sent to an
// endpoint, newest first, each with the state of its delivery; filtered by status, channel, tag,
// event_types, before and after (when the delivery was created).
func (s *Server) listAttemptedMessages(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	q, err := readListQuery(r, iterateAny, filterStatus|filterTag)
	if err != nil {
		return err
	}
	ctx := r.Context()
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	f := hookd.DeliveryFilter{Before: q.before, After: q.after}
	switch {
	case q.status == nil:
	case *q.status == msgSuccess:
		f.Status = hookd.DeliveryDelivered
	case *q.status == msgPending, *q.status == msgSending:
		f.Status = hookd.DeliveryPending
	case *q.status == msgFail:
		f.Statuses = []hookd.DeliveryStatus{hookd.DeliveryFailed, hookd.DeliveryCancelled}
	}
	types := make(map[string]bool, len(q.eventTypes))
	for _, et := range q.eventTypes {
		types[et] = true
	}
	keep := func(em *hookd.EndpointMessage) bool {
		if q.status != nil && deliveryStatus(&em.Delivery) != *q.status {
			return false
		}
		if len(types) > 0 && !types[em.Message.EventType] {
			return false
		}
		if q.tag != "" && !slices.Contains(em.Message.Tags, q.tag) {
			return false
		}
		return q.channel == "" || slices.Contains(em.Message.Channels, q.channel)
	}
	endpointID := r.PathValue("endpoint_id")
	fetch := func(o hookd.ListOptions) (*hookd.Page[hookd.EndpointMessage], error) {
		g := f
		g.ListOptions = o
		return s.client.ListEndpointMessages(ctx, a.ID, endpointID, g)
	}
	// The store's filter is the whole filter but for pending against sending (whether the
	// delivery was attempted yet) and the message's event type, channel and tag.
	filtered := q.status != nil && (*q.status == msgPending || *q.status == msgSending) ||
		len(q.eventTypes) > 0 || q.channel != "" || q.tag != ""
	if !filtered {
		keep = nil
	}
	page, err := walkList(storeBatches(fetch, true, deliveryEnd), q.opts, keep,
		func(em *hookd.EndpointMessage) string { return em.Delivery.ID })
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(page, func(em *hookd.EndpointMessage) any {
		return toEndpointMsgOut(rc.gen, em, q.withContent)
	}))
	return nil
}

// resendMessage is v1.message-attempt.resend: one manual attempt of the message to the endpoint,
// 202 ({} today, no body in 1.44). A message whose payload expired or was expunged cannot be
// resent: 400 missing_payload, as Svix answers.
func (s *Server) resendMessage(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	m, err := s.resolveMessage(r, a)
	if err != nil {
		return err
	}
	err = hookd.ErrPayloadMissing
	if len(m.Payload) != 0 {
		err = s.client.Resend(r.Context(), a.ID, m.ID, r.PathValue("endpoint_id"))
	}
	if errors.Is(err, hookd.ErrPayloadMissing) {
		return errMissingPayload
	}
	if err != nil {
		return err
	}
	if rc.gen == genV144 {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
	return nil
}
