package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd/internal/upgradetest"
)

// create POSTs body to path. A field of optional the build refuses (a 422 naming it) is dropped
// and the create tried again; a field the build accepted but did not keep (absent from the answer,
// or another value) is reported. Both land in the manifest's skipped list under what.
func (g *generator) create(ctx context.Context, a *api, what, path string, body map[string]any, optional ...string) (json.RawMessage, []string, error) {
	for range len(optional) + 1 {
		code, b, err := a.do(ctx, http.MethodPost, path, body)
		if err != nil {
			return nil, nil, err
		}
		if code == http.StatusCreated || code == http.StatusOK || code == http.StatusAccepted {
			var kept []string
			for _, f := range optional {
				v, asked := body[f]
				if !asked {
					continue
				}
				want, _ := json.Marshal(v)
				got := field(b, f)
				if got == nil && aliases[f] != "" {
					got = field(b, aliases[f])
				}
				if got == nil || !sameJSON(got, want) {
					g.skip("%s %q: not kept (the answer has %s)", what, f, orNone(got))
					continue
				}
				kept = append(kept, f)
			}
			return b, kept, nil
		}
		refused := ""
		if code == http.StatusUnprocessableEntity || code == http.StatusBadRequest {
			for _, f := range optional {
				if _, asked := body[f]; asked && strings.Contains(string(b), `"`+f+`"`) {
					refused = f
					break
				}
			}
		}
		if refused == "" {
			return nil, nil, fmt.Errorf("POST %s: status %d: %s", path, code, b)
		}
		g.skip("%s %q: refused with %d", what, refused, code)
		delete(body, refused)
	}
	return nil, nil, fmt.Errorf("POST %s: refused every optional field", path)
}

// aliases are the names a field has in the other generation of Svix's API: a build answers with
// one of the two.
var aliases = map[string]string{"filterTypes": "eventTypes", "rateLimit": "throttleRate"}

func orNone(raw json.RawMessage) string {
	if raw == nil {
		return "none"
	}
	return string(raw)
}

// createApp creates an application; uid and name are required of every build.
func (g *generator) createApp(ctx context.Context, a *api, body map[string]any) (*app, error) {
	b, _, err := g.create(ctx, a, "application", "/api/v1/app", body, "metadata", "retrySchedule", "timeoutSeconds")
	if err != nil {
		return nil, err
	}
	ap := &app{id: upgradetest.ID(b)}
	if ap.id == "" {
		return nil, fmt.Errorf("POST /api/v1/app answered no id: %s", b)
	}
	g.apps = append(g.apps, ap)
	return ap, nil
}

// createEndpoint creates an endpoint of ap at the fixture's receiver, path /<app uid>/<uid>/<role>.
func (g *generator) createEndpoint(ctx context.Context, a *api, ap *app, appUID, role string, body map[string]any) (*endpoint, error) {
	ep := &endpoint{role: role, path: fmt.Sprintf("/%s/%s/%s", appUID, body["uid"], role)}
	body["url"] = "http://" + g.addr + ep.path
	b, kept, err := g.create(ctx, a, "endpoint", "/api/v1/app/"+ap.id+"/endpoint", body,
		"description", "filterTypes", "channels", "rateLimit", "metadata", "retrySchedule", "timeoutSeconds", "ordered")
	if err != nil {
		return nil, err
	}
	if ep.id = upgradetest.ID(b); ep.id == "" {
		return nil, fmt.Errorf("POST endpoint answered no id: %s", b)
	}
	ep.ordered = slices.Contains(kept, "ordered")
	ap.eps = append(ap.eps, ep)
	return ep, nil
}

// customize gives an endpoint custom headers and rotates its secret once.
func (g *generator) customize(ctx context.Context, a *api, ap *app, ep *endpoint, headers map[string]string) error {
	base := "/api/v1/app/" + ap.id + "/endpoint/" + ep.id
	code, b, err := a.do(ctx, http.MethodPut, base+"/headers", map[string]any{"headers": headers})
	if err != nil {
		return err
	}
	switch code {
	case http.StatusNoContent, http.StatusOK:
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		g.skip("endpoint headers: PUT answered %d", code)
	default:
		return fmt.Errorf("PUT %s/headers: status %d: %s", base, code, b)
	}
	code, b, err = a.do(ctx, http.MethodPost, base+"/secret/rotate", map[string]any{})
	if err != nil {
		return err
	}
	switch code {
	case http.StatusNoContent, http.StatusOK:
		ep.rotated = true
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		g.skip("secret rotation: POST answered %d", code)
	default:
		return fmt.Errorf("POST %s/secret/rotate: status %d: %s", base, code, b)
	}
	return nil
}

// portalToken issues an app-portal token for ap, with the longest life the API allows, and checks
// that it reads ap's endpoints.
func (g *generator) portalToken(ctx context.Context, a *api, ap *app) error {
	const life = 7 * 24 * time.Hour
	issued := time.Now().UTC()
	b, err := a.must(ctx, http.MethodPost, "/api/v1/auth/app-portal-access/"+ap.id, map[string]any{"expiry": int(life / time.Second)}, http.StatusOK, http.StatusCreated)
	if err != nil {
		return err
	}
	token := str(b, "token")
	if token == "" {
		g.skip("app-portal token: the answer holds no token: %s", b)
		return nil
	}
	code, _, err := newAPI(a.base, token).do(ctx, http.MethodGet, "/api/v1/app/"+ap.id+"/endpoint", nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("the app-portal token the build issued reads its application's endpoints with status %d", code)
	}
	g.m.Portal = &upgradetest.PortalToken{App: ap.id, Token: token, Expires: issued.Add(life).Truncate(time.Second)}
	return nil
}

// send sends a message to ap, which the build should deliver to targets.
func (g *generator) send(ctx context.Context, a *api, ap *app, eventType string, channels []string, targets []*endpoint) error {
	uid := strings.Split(strings.TrimPrefix(targets[0].path, "/"), "/")[0]
	n := len(ap.msgs) + 1
	body := map[string]any{
		"eventType": eventType,
		"eventId":   fmt.Sprintf("%s-%d", uid, n),
		"payload":   newPayload(g.o.state, uid, eventType, n),
		"tags":      []string{"fixture", uid},

		"payloadRetentionPeriod": 90,
	}
	if channels != nil {
		body["channels"] = channels
	}
	b, _, err := g.create(ctx, a, "message", "/api/v1/app/"+ap.id+"/msg", body, "tags", "channels")
	if err != nil {
		return err
	}
	msg := &message{id: upgradetest.ID(b), targets: targets}
	if msg.id == "" {
		return fmt.Errorf("POST msg answered no id: %s", b)
	}
	ap.msgs = append(ap.msgs, msg)
	return nil
}

// waitStatus waits until the build reports msg's delivery to ep with status want.
func (g *generator) waitStatus(ctx context.Context, a *api, ap *app, msg *message, ep *endpoint, want int, within time.Duration) error {
	deadline := time.Now().Add(within)
	last := "not listed"
	for {
		dests, err := a.list(ctx, "/api/v1/app/"+ap.id+"/msg/"+msg.id+"/endpoint")
		if err != nil {
			return err
		}
		for _, d := range dests {
			if upgradetest.ID(d) != ep.id {
				continue
			}
			var s struct {
				Status int `json:"status"`
			}
			_ = json.Unmarshal(d, &s)
			if s.Status == want {
				return nil
			}
			last = fmt.Sprint("status ", s.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("message %s to endpoint %s (%s): %s after %s, want status %d", msg.id, ep.id, ep.role, last, within, want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
