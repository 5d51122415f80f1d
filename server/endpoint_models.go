package server

import (
	"cmp"
	"slices"
	"time"

	"github.com/hookd/hookd"
)

// The response shapes of the endpoint routes. Where the two generations differ there is one
// struct per generation: genV144's with exactly the fields of the 1.44 spec, genCurrent's with every
// field Svix's server writes.

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

// endpointOutCommon is what Svix's server writes of every endpoint, in an EndpointOut and in a
// MessageEndpointOut alike: both names of the filter (eventTypes, filterTypes) and of the rate
// (throttleRate, rateLimit), and version, each always present, null when unset. Its OpenAPI file
// hides filterTypes, rateLimit and version, but the SDKs read them: the Go and npm SDKs 1.99
// decode filterTypes, the Python one requires version.
type endpointOutCommon struct {
	Description  string    `json:"description"`
	RateLimit    *int      `json:"rateLimit"`
	ThrottleRate *int      `json:"throttleRate"`
	UID          *string   `json:"uid"`
	URL          string    `json:"url"`
	Version      int       `json:"version"`
	Disabled     bool      `json:"disabled"`
	EventTypes   []string  `json:"eventTypes"`
	FilterTypes  []string  `json:"filterTypes"`
	Channels     []string  `json:"channels"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// endpointOutCurrent is EndpointOut as Svix's server writes it. hookd's own fields, which no Svix
// SDK reads, follow Metadata.
type endpointOutCurrent struct {
	endpointOutCommon
	ID       string            `json:"id"`
	Metadata map[string]string `json:"metadata"`
	// Scheme is hookd's own: how deliveries are signed. SDKs skip a field they don't know.
	Scheme string `json:"scheme"`
	// RetrySchedule (seconds) and TimeoutSeconds are hookd's own: the endpoint's retry policy,
	// null when it inherits its application's (retry_policy.go).
	RetrySchedule  []float64 `json:"retrySchedule"`
	TimeoutSeconds *float64  `json:"timeoutSeconds"`
	// Ordered is hookd's own: the endpoint's deliveries go one at a time in message order.
	Ordered bool `json:"ordered"`
}

// endpointCommonOf returns the fields every endpoint output carries.
func endpointCommonOf(ep *hookd.Endpoint) endpointOutCommon {
	rate := endpointRate(ep)
	return endpointOutCommon{
		Description: ep.Description, RateLimit: rate, ThrottleRate: rate, UID: nullString(ep.UID), URL: ep.URL,
		Version: max(ep.Version, 1), Disabled: ep.Disabled, EventTypes: nullList(ep.EventTypes),
		FilterTypes: nullList(ep.EventTypes), Channels: nullList(ep.Channels),
		CreatedAt: ep.CreatedAt.UTC(), UpdatedAt: ep.UpdatedAt.UTC(),
	}
}

// endpointOut returns ep in the shape of gen.
func endpointOut(gen generation, ep *hookd.Endpoint) any {
	meta := ep.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	if gen == genV144 {
		return &endpointOutV144{
			ID: ep.ID, UID: nullString(ep.UID), URL: ep.URL, Description: ep.Description, Version: max(ep.Version, 1),
			FilterTypes: nullList(ep.EventTypes), Channels: nullList(ep.Channels), RateLimit: endpointRate(ep),
			Disabled: ep.Disabled, Metadata: meta, CreatedAt: ep.CreatedAt.UTC(), UpdatedAt: ep.UpdatedAt.UTC(),
		}
	}
	return &endpointOutCurrent{
		endpointOutCommon: endpointCommonOf(ep), ID: ep.ID, Metadata: meta,
		Scheme:        cmp.Or(string(ep.Scheme), string(hookd.SchemeStandard)),
		RetrySchedule: scheduleOut(ep.RetrySchedule), TimeoutSeconds: timeoutOut(ep.AttemptTimeout),
		Ordered: ep.Ordered,
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
		if hookd.SensitiveHeader(k) {
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

// endpointStatsOf writes the counts of attempts. As in Svix's server, whose attempts are recorded
// once made, pending, sending and canceled are 0.
func endpointStatsOf(gen generation, s *hookd.EndpointStats) any {
	if gen == genV144 {
		return &endpointStatsV144{Success: s.Success, Fail: s.Fail}
	}
	return &endpointStatsCurrent{Success: s.Success, Fail: s.Fail}
}
