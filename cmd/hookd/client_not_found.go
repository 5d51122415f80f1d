package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	svix "github.com/svix/svix-webhooks/go"
)

// target names what a client command's route addresses: its application and, below it, an
// endpoint, a message, or both (resend); or an event type, which belongs to no application. A 404
// from the route is told as the one of these that is missing.
type target struct {
	app, endpoint, msg string
	eventType          string
}

// failAt is fail for a command whose route addresses t: a 404 says which entity was not found
// ("endpoint ep_x not found in application acme") instead of the API's "Entity not found".
func (c *conn) failAt(ctx context.Context, op string, t target, err error) error {
	if !isNotFound(err) || t == (target{}) {
		var xe *exitError
		if errors.As(err, &xe) {
			return err // hookdCall's error, already told
		}
		return c.fail(op, err)
	}
	msg, hint := c.whatNotFound(ctx, t)
	return &exitError{code: exitFailure, msg: op + ": " + msg, hint: hint, status: http.StatusNotFound}
}

// isNotFound reports whether err is the API's 404, from the SDK or from hookdCall.
func isNotFound(err error) bool {
	var se *svix.Error
	if errors.As(err, &se) {
		return se.Status() == http.StatusNotFound
	}
	var xe *exitError
	return errors.As(err, &xe) && xe.status == http.StatusNotFound
}

// whatNotFound tells which entity of t is missing. A route below an application answers 404 for
// a missing application and for a missing entity in it alike, so the application is looked up
// on its own first; with both a message and an endpoint, the message is looked up too. When a
// lookup fails for another reason, the answer names the whole path.
func (c *conn) whatNotFound(ctx context.Context, t target) (msg, hint string) {
	if t.eventType != "" {
		return fmt.Sprintf("event type %s not found", t.eventType), `"hookd event-type list" lists the event types`
	}
	appHint := `"hookd app list" lists the applications, with their ids and uids`
	if t.endpoint == "" && t.msg == "" {
		return fmt.Sprintf("application %s not found", t.app), appHint
	}
	if _, err := c.sdk.Application.Get(ctx, t.app); err != nil {
		if isNotFound(err) {
			return fmt.Sprintf("application %s not found", t.app), appHint
		}
		return c.unknownMissing(t)
	}
	epMissing := func() (string, string) {
		return fmt.Sprintf("endpoint %s not found in application %s", t.endpoint, t.app),
			fmt.Sprintf(`"hookd endpoint list %s" lists its endpoints`, t.app)
	}
	msgMissing := func() (string, string) {
		return fmt.Sprintf("message %s not found in application %s", t.msg, t.app),
			fmt.Sprintf(`"hookd messages %s" lists its messages (MSG is a message id or event id)`, t.app)
	}
	switch {
	case t.msg == "":
		return epMissing()
	case t.endpoint == "":
		return msgMissing()
	}
	if _, err := c.sdk.Message.Get(ctx, t.app, t.msg); err != nil {
		if isNotFound(err) {
			return msgMissing()
		}
		return c.unknownMissing(t)
	}
	return epMissing()
}

// unknownMissing names every part of t when the lookups that tell them apart failed.
func (c *conn) unknownMissing(t target) (msg, hint string) {
	what := "application " + t.app
	if t.msg != "" {
		what += ", message " + t.msg
	}
	if t.endpoint != "" {
		what += ", endpoint " + t.endpoint
	}
	return "not found: one of " + what, errorHint(http.StatusNotFound, "")
}
