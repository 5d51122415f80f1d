package hookd

import "time"

// Token is an API token of the server, stored by hash only.
type Token struct {
	Hash      string // hex SHA-256 of the token
	AppID     string // empty: the admin token; else an app-portal token for this application
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: does not expire
	// ReadOnly refuses the token every write and the endpoint secrets (app-portal tokens only).
	ReadOnly bool
	// FeatureFlags are the flags an app-portal token holds: it sees the event types gated by any
	// of them. nil: none.
	FeatureFlags []string
}

// Session is a browser's sign-in to the dashboard or the portal, stored by the hash of its id
// only (the id lives in the browser's cookie). It lasts until ExpiresAt, until it is ended, or
// until the token it was opened with stops working, whichever comes first.
type Session struct {
	Hash      string // hex SHA-256 of the session id
	TokenHash string // hex SHA-256 of the token signed in with
	AppID     string // empty: a dashboard session; else a portal session of this application
	CreatedAt time.Time
	ExpiresAt time.Time
}
