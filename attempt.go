package hookd

import (
	"context"
	"fmt"
	"time"
)

// AttemptTrigger says why an attempt was made.
type AttemptTrigger string

const (
	TriggerScheduled AttemptTrigger = "scheduled" // the first attempt or a retry on the schedule
	TriggerManual    AttemptTrigger = "manual"    // Resend or Recover
)

// Attempt is one HTTP request of a delivery, as the attempt log shows it.
type Attempt struct {
	ID         string // "atmpt_..."
	DeliveryID string
	MessageID  string
	EndpointID string
	AppID      string
	// Number is the scheduled attempt's place in the schedule (1 for the first). A manual attempt
	// carries the number of scheduled attempts made before it (0 when none was), and Trigger says
	// it was manual.
	Number     int
	Trigger    AttemptTrigger
	URL        string
	At         time.Time
	Duration   time.Duration
	StatusCode int    // 0 when no response arrived
	Success    bool   // a 2xx arrived
	Error      string // why it failed, for a human; empty on success
	Response   string // the response body, up to the configured cap; why, when no response arrived
	// RequestHeaders are the headers the attempt sent, the signature's included and the values of
	// the endpoint's own headers Redacted; ResponseHeaders the response's. Both are bounded
	// (AttemptHeaders), the response's further to MaxResponseHeaderBytes, and empty when nothing
	// was sent or no response arrived. Stores keep them compactly (Attempt.EncodeHeaders).
	RequestHeaders  AttemptHeaders
	ResponseHeaders AttemptHeaders
}

// ExpungedResponse is the response of an attempt whose content was expunged, as Svix shows it.
const ExpungedResponse = "EXPUNGED"

// GetAttempt returns an attempt of a message (by id or event id) of an application. An attempt of
// another message is ErrNotFound.
func (c *Client) GetAttempt(ctx context.Context, app, msg, attempt string) (*Attempt, error) {
	m, err := c.GetMessage(ctx, app, msg)
	if err != nil {
		return nil, err
	}
	a, err := c.store.GetAttempt(ctx, attempt)
	if err == nil && (a.MessageID != m.ID || a.AppID != m.AppID) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("hookd: get attempt %q of message %q: %w", attempt, msg, err)
	}
	return a, nil
}

// ListAttempts lists attempts, newest first. f.AppID is set from app.
func (c *Client) ListAttempts(ctx context.Context, app string, f AttemptFilter) (*Page[Attempt], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f.AppID = a.ID
	f.FromID, _ = c.idBounds(prefixAttempt, f.After, nil)
	return c.store.ListAttempts(ctx, f)
}

// ExpungeAttemptContent replaces the response body captured by an attempt of a message (by id or
// event id) of an application with ExpungedResponse. An attempt of another message is ErrNotFound.
func (c *Client) ExpungeAttemptContent(ctx context.Context, app, msg, attempt string) error {
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		m, err := tx.GetMessage(ctx, a.ID, msg)
		if err != nil {
			return err
		}
		at, err := tx.GetAttempt(ctx, attempt)
		if err != nil {
			return err
		}
		if at.MessageID != m.ID || at.AppID != a.ID {
			return ErrNotFound
		}
		return tx.ExpungeAttemptResponse(ctx, at.ID)
	})
	if err != nil {
		return fmt.Errorf("hookd: expunge content of attempt %q: %w", attempt, err)
	}
	return nil
}

// AttemptsPerHour counts the attempts to an application's endpoints (or to one of them, endpoint
// not empty), made since since, by the hour (UTC) they were made in, oldest first; hours without
// attempts are left out.
func (c *Client) AttemptsPerHour(ctx context.Context, app, endpoint string, since time.Time) ([]HourCount, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f := AttemptStatsFilter{AppID: a.ID, Since: since.UTC(), FromID: AttemptIDFloor(since)}
	if endpoint != "" {
		ep, err := c.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return nil, err
		}
		f.EndpointID = ep.ID
	}
	out, err := c.store.AttemptsPerHour(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("hookd: attempts per hour: %w", err)
	}
	return out, nil
}

// AttemptsByEndpoint counts the attempts to each of an application's endpoints named by
// endpointIDs (their ids, as listed), made since since; endpoints without attempts are left out.
// On a store that counts them in one statement (both of this module's do) it is one read;
// otherwise one AttemptsPerHour an endpoint.
func (c *Client) AttemptsByEndpoint(ctx context.Context, app string, endpointIDs []string, since time.Time) (map[string]AttemptCount, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f := AttemptStatsFilter{AppID: a.ID, Since: since.UTC(), FromID: AttemptIDFloor(since)}
	if ec, ok := c.store.(EndpointAttemptCounter); ok {
		out, err := ec.AttemptsByEndpoint(ctx, f, endpointIDs)
		if err != nil {
			return nil, fmt.Errorf("hookd: attempts by endpoint: %w", err)
		}
		return out, nil
	}
	out := make(map[string]AttemptCount)
	for _, id := range endpointIDs {
		f.EndpointID = id
		hours, err := c.store.AttemptsPerHour(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("hookd: attempts by endpoint: %w", err)
		}
		if n := SumHours(hours); n != (AttemptCount{}) {
			out[id] = n
		}
	}
	return out, nil
}

// EndpointStats counts the attempts made to an endpoint in a window, by outcome, as Svix's
// endpoint stats do.
type EndpointStats struct {
	Success int // attempts that succeeded
	Fail    int // attempts that failed
}
