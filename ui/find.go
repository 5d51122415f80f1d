package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/hookd/hookd"
)

// maxFind bounds the text the search box takes: longer than any id, uid or event id.
const maxFind = 256

// find answers an application's search box: a message id or event id opens the message, an
// endpoint id or uid opens the endpoint. It looks in the page's application only, so the portal
// finds nothing of another application's.
func (h *Handler) find(q *req) error {
	app, err := h.client.GetApplication(q.ctx, q.r.PathValue("app"))
	if err != nil {
		return err
	}
	s := strings.TrimSpace(q.r.URL.Query().Get("q"))
	switch {
	case s == "":
		return &hookd.ValidationError{Field: "q", Reason: "type a message id (msg_…), an event id or an endpoint id (ep_…)"}
	case len(s) > maxFind:
		return &hookd.ValidationError{Field: "q", Reason: fmt.Sprintf("is longer than %d characters: no id is", maxFind)}
	}
	base := q.base + "/app/" + url.PathEscape(app.ID)
	lookups := []func() (string, error){
		func() (string, error) {
			m, err := h.client.GetMessage(q.ctx, app.ID, s)
			if err != nil {
				return "", err
			}
			return base + "/msg/" + url.PathEscape(m.ID), nil
		},
		func() (string, error) {
			ep, err := h.client.GetEndpoint(q.ctx, app.ID, s)
			if err != nil {
				return "", err
			}
			return base + "/endpoint/" + url.PathEscape(ep.ID), nil
		},
	}
	if strings.HasPrefix(s, "ep_") {
		lookups[0], lookups[1] = lookups[1], lookups[0]
	}
	for _, look := range lookups {
		to, err := look()
		if errors.Is(err, hookd.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		http.Redirect(q.w, q.r, to, http.StatusSeeOther)
		return nil
	}
	h.fail(q.w, q.r, http.StatusNotFound, fmt.Sprintf("Nothing in %s has the id or event id %q: check it, or look in the message log.", app.Name, s))
	return nil
}
