package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/hookd/hookd/internal/upgradetest"
)

// record reads back, through the build's API, everything the scenario made, and fills the
// manifest. It checks each delivery's attempts against its endpoint's role first: a manifest
// records only a state the build was seen to be in.
func (g *generator) record(ctx context.Context, a *api) error {
	for _, name := range g.eventTypes {
		b, err := a.get(ctx, "/api/v1/event-type/"+name)
		if err != nil {
			return err
		}
		g.m.EventTypes = append(g.m.EventTypes, b)
	}
	for _, ap := range g.apps {
		rec := upgradetest.Application{Endpoints: []upgradetest.Endpoint{}, Messages: []upgradetest.Message{}}
		var err error
		if rec.App, err = a.get(ctx, "/api/v1/app/"+ap.id); err != nil {
			return err
		}
		for _, ep := range ap.eps {
			e, err := g.recordEndpoint(ctx, a, ap, ep)
			if err != nil {
				return err
			}
			rec.Endpoints = append(rec.Endpoints, e)
		}
		for _, msg := range ap.msgs {
			m, err := g.recordMessage(ctx, a, ap, msg)
			if err != nil {
				return err
			}
			rec.Messages = append(rec.Messages, m)
		}
		g.m.Applications = append(g.m.Applications, rec)
	}
	return nil
}

func (g *generator) recordEndpoint(ctx context.Context, a *api, ap *app, ep *endpoint) (upgradetest.Endpoint, error) {
	base := "/api/v1/app/" + ap.id + "/endpoint/" + ep.id
	e := upgradetest.Endpoint{Role: ep.role, Rotated: ep.rotated, Ordered: ep.ordered}
	var err error
	if e.Endpoint, err = a.get(ctx, base); err != nil {
		return e, err
	}
	secret, err := a.get(ctx, base+"/secret")
	if err != nil {
		return e, err
	}
	if e.Secret = str(secret, "key"); e.Secret == "" {
		return e, fmt.Errorf("GET %s/secret: no key in %s", base, secret)
	}
	code, headers, err := a.do(ctx, http.MethodGet, base+"/headers", nil)
	if err != nil {
		return e, err
	}
	if code == http.StatusOK {
		e.Headers = headers
	}
	return e, nil
}

// attempt is what record reads of an attempt.
type attempt struct {
	EndpointID         string `json:"endpointId"`
	Status             int    `json:"status"`
	ResponseStatusCode int    `json:"responseStatusCode"`
}

func (g *generator) recordMessage(ctx context.Context, a *api, ap *app, msg *message) (upgradetest.Message, error) {
	m := upgradetest.Message{Attempts: []json.RawMessage{}}
	var err error
	if m.Message, err = a.get(ctx, "/api/v1/app/"+ap.id+"/msg/"+msg.id); err != nil {
		return m, err
	}
	attempts, err := a.list(ctx, "/api/v1/app/"+ap.id+"/attempt/msg/"+msg.id)
	if err != nil {
		return m, err
	}
	m.Attempts = append(m.Attempts, attempts...)
	byEndpoint := map[string][]attempt{}
	for _, raw := range m.Attempts {
		var at attempt
		if err := json.Unmarshal(raw, &at); err != nil {
			return m, fmt.Errorf("attempt of message %s: %w in %s", msg.id, err, raw)
		}
		byEndpoint[at.EndpointID] = append(byEndpoint[at.EndpointID], at)
	}
	for _, ep := range msg.targets {
		state, err := deliveryState(ep, byEndpoint[ep.id], msg == headOf(ap, ep))
		if err != nil {
			return m, fmt.Errorf("message %s to endpoint %s (%s): %w", msg.id, ep.id, ep.role, err)
		}
		m.Deliveries = append(m.Deliveries, upgradetest.Delivery{Endpoint: ep.id, State: state})
	}
	return m, nil
}

// headOf is the first message of ap sent to ep.
func headOf(ap *app, ep *endpoint) *message {
	for _, msg := range ap.msgs {
		for _, t := range msg.targets {
			if t == ep {
				return msg
			}
		}
	}
	return nil
}

// deliveryState checks a delivery's attempts against its endpoint's role and returns its state.
func deliveryState(ep *endpoint, attempts []attempt, head bool) (string, error) {
	failed := 0
	succeeded := 0
	for _, at := range attempts {
		if at.ResponseStatusCode >= 200 && at.ResponseStatusCode < 300 {
			succeeded++
		} else {
			failed++
		}
	}
	want := func(s, f int, state string) (string, error) {
		if succeeded != s || failed != f {
			return "", fmt.Errorf("%d successful and %d failed attempts, want %d and %d", succeeded, failed, s, f)
		}
		return state, nil
	}
	switch ep.role {
	case upgradetest.RoleOK:
		return want(1, 0, upgradetest.Delivered)
	case upgradetest.RoleDead:
		if succeeded != 0 || failed < 2 {
			return "", fmt.Errorf("%d successful and %d failed attempts, want none and at least 2", succeeded, failed)
		}
		return upgradetest.Failed, nil
	case upgradetest.RoleDown:
		return want(0, 1, upgradetest.Pending)
	case upgradetest.RoleOrdered:
		if head {
			return want(0, 1, upgradetest.Pending)
		}
		return want(0, 0, upgradetest.Pending)
	case upgradetest.RoleHang, upgradetest.RoleQueued:
		return want(0, 0, upgradetest.Pending)
	}
	return "", fmt.Errorf("unknown role %q", ep.role)
}
