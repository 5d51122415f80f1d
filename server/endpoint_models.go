package server

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// The response shapes of the endpoint routes. Where the two generations differ there is one
// struct per generation, each with exactly the fields of its spec.

// endpointOutV144 is EndpointOut of Svix 1.44: filterTypes, rateLimit, version.
type endpointOutV144 struct {
	ID          string            `json:"id"`
	UID         *string           `json:"uid"`
	URL         string            `json:"url"`
	Description string            `json:"description"`
	Version     int               `json:"version"`
	FilterTypes []string          `json:"filterTypes"`
	Channels    []string          `json:"channels"`
	RateLimit   *int              `json:"rateLimit"`
	Disabled    bool              `json:"disabled"`
	Metadata    map[string]string `json:"metadata"`
	CreatedAt   time.Time         `json:"createdAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
}

// endpointOutCurrent is today's EndpointOut: eventTypes, throttleRate, no version.
type endpointOutCurrent struct {
	ID           string            `json:"id"`
	UID          *string           `json:"uid"`
	URL          string            `json:"url"`
	Description  string            `json:"description"`
	EventTypes   []string          `json:"eventTypes"`
	Channels     []string          `json:"channels"`
	ThrottleRate *int              `json:"throttleRate"`
	Disabled     bool              `json:"disabled"`
	Metadata     map[string]string `json:"metadata"`
	CreatedAt    time.Time         `json:"createdAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
	// Scheme is hookd's own: how deliveries are signed. SDKs skip a field they don't know.
	Scheme string `json:"scheme"`
}

// endpointOut returns ep in the shape of gen.
func endpointOut(gen generation, ep *hookd.Endpoint) any {
	uid := nullString(ep.UID)
	rate := endpointRate(ep)
	meta := ep.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	if gen == genV144 {
		return &endpointOutV144{
			ID: ep.ID, UID: uid, URL: ep.URL, Description: ep.Description, Version: max(ep.Version, 1),
			FilterTypes: nullList(ep.EventTypes), Channels: nullList(ep.Channels), RateLimit: rate,
			Disabled: ep.Disabled, Metadata: meta, CreatedAt: ep.CreatedAt.UTC(), UpdatedAt: ep.UpdatedAt.UTC(),
		}
	}
	return &endpointOutCurrent{
		ID: ep.ID, UID: uid, URL: ep.URL, Description: ep.Description,
		EventTypes: nullList(ep.EventTypes), Channels: nullList(ep.Channels), ThrottleRate: rate,
		Disabled: ep.Disabled, Metadata: meta, CreatedAt: ep.CreatedAt.UTC(), UpdatedAt: ep.UpdatedAt.UTC(),
		Scheme: cmp.Or(string(ep.Scheme), string(hookd.SchemeStandard)),
	}
}

// endpointRate is the endpoint's rate limit, nil (written as null) when it has none.
func endpointRate(ep *hookd.Endpoint) *int {
	if ep.RateLimit <= 0 {
		return nil
	}
	r := ep.RateLimit
	return &r
}

// endpointHeadersOut is EndpointHeadersOut: the headers, but those that carry credentials, whose
// names are listed in sensitive instead.
type endpointHeadersOut struct {
	Headers   map[string]string `json:"headers"`
	Sensitive []string          `json:"sensitive"`
}

func endpointHeadersOf(h map[string]string) *endpointHeadersOut {
	out := &endpointHeadersOut{Headers: map[string]string{}, Sensitive: []string{}}
	for k, v := range h {
		if slices.Contains(sensitiveEndpointHeaders, strings.ToLower(k)) {
			out.Sensitive = append(out.Sensitive, k)
			continue
		}
		out.Headers[k] = v
	}
	slices.Sort(out.Sensitive)
	return out
}

// endpointSecretOut is EndpointSecretOut.
type endpointSecretOut struct {
	Key string `json:"key"`
}

// recoverOutV144 is RecoverOut of Svix 1.44.
type recoverOutV144 struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Task   string `json:"task"`
}

// recoverOutCurrent is today's RecoverOut, with updatedAt.
type recoverOutCurrent struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Task      string    `json:"task"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func recoverOutOf(gen generation, id string, at time.Time) any {
	if gen == genV144 {
		return &recoverOutV144{ID: id, Status: "running", Task: "endpoint.recover"}
	}
	return &recoverOutCurrent{ID: id, Status: "running", Task: "endpoint.recover", UpdatedAt: at.UTC()}
}

// endpointStatsV144 is EndpointStats of Svix 1.44.
type endpointStatsV144 struct {
	Success int `json:"success"`
	Pending int `json:"pending"`
	Sending int `json:"sending"`
	Fail    int `json:"fail"`
}

// endpointStatsCurrent is today's EndpointStats, with canceled.
type endpointStatsCurrent struct {
	Success  int `json:"success"`
	Pending  int `json:"pending"`
	Sending  int `json:"sending"`
	Fail     int `json:"fail"`
	Canceled int `json:"canceled"`
}

// endpointStatsOf writes hookd's counts. hookd has no separate "sending" state (a delivery in flight is
// pending) and counts cancelled deliveries with the failed ones, so sending and canceled are 0.
func endpointStatsOf(gen generation, s *hookd.EndpointStats) any {
	if gen == genV144 {
		return &endpointStatsV144{Success: s.Success, Pending: s.Pending, Fail: s.Fail}
	}
	return &endpointStatsCurrent{Success: s.Success, Pending: s.Pending, Fail: s.Fail}
}
