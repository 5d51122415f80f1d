package server

import (
	"errors"
	"net/http"

	"github.com/hookd/hookd"
)

// createMessage is v1.message.create: 202 with the message. A second message with an eventId the
// application already has is 409, as in Svix, and sends nothing. With application set, a missing
// application of the path is created first (its uid must equal the path's app_id).
func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	withContent, err := queryBool(r, "with_content", true)
	if err != nil {
		return err
	}
	var in msgIn
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	msg, err := in.check()
	if err != nil {
		return err
	}
	ctx := r.Context()
	appID, err := appPathParam(r)
	if err != nil {
		return err
	}
	// The admin sends straight away (Send finds the application in its own transaction, so the
	// request waits for the database once); an app-portal token is checked against it first.
	var res *hookd.SendResult
	if rc.principal.AppID == "" {
		res, err = s.client.Send(ctx, appID, msg)
		if errors.Is(err, hookd.ErrNotFound) && in.Application != nil {
			res, err = s.sendCreatingApp(r, in.Application, appID, msg)
		}
	} else {
		var a *hookd.Application
		if a, err = s.resolveApp(r, rc); err == nil {
			res, err = s.client.Send(ctx, a.ID, msg)
		}
	}
	if err != nil {
		return err
	}
	if res.Duplicate {
		return conflict("A message with this eventId already exists (" + res.Message.ID + ").")
	}
	writeJSON(w, http.StatusAccepted, toMsgOut(res.Message, withContent))
	return nil
}

// sendCreatingApp creates the application given inline in a MessageIn (Svix's "application"
// field, used when the path's application does not exist) and sends msg to it.
func (s *Server) sendCreatingApp(r *http.Request, in *msgAppIn, appID string, msg *hookd.MessageIn) (*hookd.SendResult, error) {
	switch {
	case in.UID == nil:
		return nil, invalidField("body", "application.uid", "Application UID not set in body")
	case *in.UID != appID:
		return nil, invalidField("body", "application.uid", "Application UID in the path and body must match")
	}
	ctx := r.Context()
	a, err := s.client.CreateApplication(ctx, in.toHookd())
	if errors.Is(err, hookd.ErrConflict) {
		// Created meanwhile by another request.
		a, err = s.client.GetApplication(ctx, appID)
	}
	if err != nil {
		return nil, err
	}
	return s.client.Send(ctx, a.ID, msg)
}

// listMessages is v1.message.list: newest first, filtered by event_types, channel, tag, before
// and after.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	q, err := readListQuery(r, iterateMessages, filterTag)
	if err != nil {
		return err
	}
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	page, err := s.client.ListMessages(r.Context(), a.ID, hookd.MessageFilter{
		EventTypes: q.eventTypes, Channel: q.channel, Tag: q.tag, Before: q.before, After: q.after, FromAfter: true, ListOptions: q.opts,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(page, func(m *hookd.Message) msgOut { return toMsgOut(m, q.withContent) }))
	return nil
}

// getMessage is v1.message.get: by id or eventId.
func (s *Server) getMessage(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	withContent, err := queryBool(r, "with_content", true)
	if err != nil {
		return err
	}
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	m, err := s.resolveMessage(r, a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toMsgOut(m, withContent))
	return nil
}

// expungeMessageContent is v1.message.expunge-content: the payload is deleted, 204. The message
// then shows {"expired":true} as its payload and can no longer be resent.
func (s *Server) expungeMessageContent(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	if err := s.client.ExpungeMessageContent(r.Context(), a.ID, r.PathValue("msg_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
