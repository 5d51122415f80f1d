package hookd

import "time"

// PendingEndpoint is one endpoint's backlog: its deliveries still pending, for metrics.
type PendingEndpoint struct {
	EndpointID string
	AppID      string
	Pending    int       // deliveries pending, at least 1
	Oldest     time.Time // CreatedAt of the oldest of them
}
