package hookd

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/hookd/hookd/delivery"
)

// The workers' log lines. Each names the application, endpoint, message and delivery by id, and
// none holds a secret: no signing key, header value, payload or URL (an endpoint's URL may carry
// credentials in its userinfo or query), only the endpoint's id. A failed attempt is logged at
// Debug; at Info and above there is one line per change of state (a circuit opening or closing,
// an endpoint disabled, a delivery exhausted), so an endpoint that fails thousands of times a
// minute adds a bounded number of lines.

// deliveryAttrs are the ids a delivery's lines carry.
func deliveryAttrs(d *Delivery) []slog.Attr {
	return []slog.Attr{
		slog.String("app_id", d.AppID), slog.String("endpoint_id", d.EndpointID),
		slog.String("msg_id", d.MessageID), slog.String("delivery_id", d.ID),
	}
}

// attemptReason is what went wrong in a failed attempt, in words safe to log: the status, or the
// transport failure, with no URL in it.
func attemptReason(res *delivery.Result) string {
	var urlErr *delivery.URLError
	switch {
	case res.StatusCode != 0:
		return "HTTP " + strconv.Itoa(res.StatusCode)
	case errors.As(res.Err, &urlErr):
		return "invalid endpoint URL: " + urlErr.Reason
	case res.Err != nil:
		return res.Err.Error()
	}
	return res.Outcome.String()
}

// attemptChanges are the changes of state an attempt made.
type attemptChanges struct {
	disable   string // the reason the endpoint is disabled; "": it is not
	exhausted bool   // the delivery failed with its schedule run out
	recovered bool   // the delivery succeeded after message.attempt.failing
	circuit   circuitChange
	cooldown  time.Duration // of a circuit that opened
}

// logAttempt logs what one attempt changed: the attempt itself at Debug when it failed, and at
// Info or Warn the circuit opening or closing, the endpoint disabled, the delivery recovered or exhausted.
func (c *Client) logAttempt(ctx context.Context, d *Delivery, number int, res *delivery.Result, ch attemptChanges) {
	log := c.cfg.Logger
	ids := deliveryAttrs(d)
	if res.Outcome != delivery.Success && log.Enabled(ctx, slog.LevelDebug) {
		log.LogAttrs(ctx, slog.LevelDebug, "hookd attempt failed", append(ids,
			slog.Int("attempt", number), slog.String("reason", attemptReason(res)),
			slog.Int("status", res.StatusCode), slog.Duration("duration", res.Duration))...)
	}
	switch ch.circuit {
	case circuitOpened:
		log.LogAttrs(ctx, slog.LevelWarn, "hookd endpoint circuit opened; attempts to it pause",
			slog.String("app_id", d.AppID), slog.String("endpoint_id", d.EndpointID), slog.Duration("cooldown", ch.cooldown),
			slog.String("reason", attemptReason(res)))
	case circuitClosed:
		log.LogAttrs(ctx, slog.LevelInfo, "hookd endpoint circuit closed; the endpoint recovered",
			slog.String("app_id", d.AppID), slog.String("endpoint_id", d.EndpointID))
	}
	if ch.disable != "" {
		log.LogAttrs(ctx, slog.LevelWarn, "hookd endpoint disabled", append(ids, slog.String("reason", ch.disable))...)
	}
	if ch.recovered {
		log.LogAttrs(ctx, slog.LevelInfo, "hookd delivery recovered after failing attempts", append(ids, slog.Int("attempt", number))...)
	}
	if ch.exhausted {
		log.LogAttrs(ctx, slog.LevelWarn, "hookd delivery exhausted its retry schedule", append(ids,
			slog.Int("attempts", number), slog.String("reason", attemptReason(res)))...)
	}
}
