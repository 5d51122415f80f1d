package hookd

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hookd/hookd/delivery"
)

// buildRequest signs the message for the endpoint with every active key of its scheme.
func (c *Client) buildRequest(ep *Endpoint, keys []SigningKey, m *Message, now time.Time) (*delivery.Request, error) {
	var secrets []string
	for _, k := range keys {
		if k.ExpiresAt == nil || k.ExpiresAt.After(now) {
			secrets = append(secrets, k.Secret)
		}
	}
	if len(secrets) == 0 {
		return nil, errors.New("endpoint has no active signing key")
	}
	h := make(http.Header, len(ep.Headers)+7)
	for k, v := range ep.Headers {
		h.Set(k, v)
	}
	body := []byte(m.Payload)
	switch ep.Scheme {
	case SchemeStripe, SchemeEnvelope:
		if ep.Scheme == SchemeEnvelope {
			var err error
			if body, err = envelope(m); err != nil {
				return nil, err
			}
		}
		s, err := c.sign.stripeSigner(secrets)
		if err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		for k, v := range s.Headers(m.EventType, now, body) {
			h[k] = v
		}
	default:
		s, err := c.sign.webhook(secrets)
		if err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		if err := setStandardHeaders(h, s, c.cfg.SignatureHeaders.flavors(ep.Scheme), m.ID, now, body); err != nil {
			return nil, err
		}
	}
	h.Set("Content-Type", "application/json")
	return &delivery.Request{URL: ep.URL, Header: h, Body: body, Timeout: c.attemptTimeout(ep)}, nil
}

// envelope is the body of SchemeEnvelope for m: {"id", "type", "occurredAt", "data"}.
func envelope(m *Message) ([]byte, error) {
	id := m.EventID
	if id == "" {
		id = m.ID
	}
	return json.Marshal(struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		OccurredAt string          `json:"occurredAt"`
		Data       json.RawMessage `json:"data"`
	}{id, m.EventType, m.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"), json.RawMessage(m.Payload)})
}
