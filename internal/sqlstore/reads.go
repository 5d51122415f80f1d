package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

// The reads below are one statement each, written once with ? marks (Bind numbers them) and the
// dialect's fragments; cols is the store's column list for the entity.

// Bind returns q with its ? marks numbered $1, $2 ... in a Numbered dialect, else q.
func (d *Dialect) Bind(q string) string {
	if d.Numbered {
		return numbered(q)
	}
	return q
}

// GetMessagesByID reads the application's messages among ids in one statement
// (hookd.MessageBatchReader).
func (r Reads) GetMessagesByID(ctx context.Context, appID string, ids []string) (map[string]hookd.Message, error) {
	d, q, cols := r.dialect, r.q, r.cols.Message
	out := make(map[string]hookd.Message)
	if len(ids) == 0 {
		return out, nil
	}
	err := q.Query(ctx, d.Bind(`SELECT `+cols+` FROM hookd_messages m WHERE m.app_id = ? AND `+d.InList("m.id")),
		[]any{appID, d.ListArg(ids)}, func(r Scanner) error {
			m, err := d.ScanMessage(r)
			out[m.ID] = m
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("get %d messages of application %s: %w", len(ids), appID, err)
	}
	return out, nil
}

// ActiveEventTypes finds the unarchived event types among names in one statement
// (hookd.EventTypeBatchReader).
func (r Reads) ActiveEventTypes(ctx context.Context, names []string) (map[string]bool, error) {
	d, q := r.dialect, r.q
	out := make(map[string]bool)
	if len(names) == 0 {
		return out, nil
	}
	err := q.Query(ctx, d.Bind(`SELECT t.name FROM hookd_event_types t WHERE `+d.Not("t.archived")+` AND `+d.InList("t.name")),
		[]any{d.ListArg(names)}, func(r Scanner) error {
			var name string
			err := r.Scan(&name)
			out[name] = true
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("find %d event types: %w", len(names), err)
	}
	return out, nil
}

// DeliveryCountsByMessage counts the deliveries of each of the application's messages among ids
// by status, in one statement.
func (r Reads) DeliveryCountsByMessage(ctx context.Context, appID string, ids []string) (map[string]hookd.DeliveryCounts, error) {
	d, q := r.dialect, r.q
	out := make(map[string]hookd.DeliveryCounts)
	if len(ids) == 0 {
		return out, nil
	}
	// The messages' index leads: on SQLite without statistics the application's would, reading
	// every delivery of the application (LeadingFilter).
	app := "d.app_id"
	if d.LeadingFilter != nil {
		app = d.LeadingFilter(app)
	}
	err := q.Query(ctx, d.Bind(`SELECT d.message_id, d.status, count(*) FROM hookd_deliveries d
		WHERE `+app+` = ? AND `+d.InList("d.message_id")+` GROUP BY d.message_id, d.status`),
		[]any{appID, d.ListArg(ids)}, func(r Scanner) error {
			var (
				id, status string
				n          int
			)
			if err := r.Scan(&id, &status, &n); err != nil {
				return err
			}
			c := out[id]
			c.Add(hookd.DeliveryStatus(status), n)
			out[id] = c
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("count deliveries of %d messages of application %s: %w", len(ids), appID, err)
	}
	return out, nil
}

// DueDeliveries returns pending deliveries due at or before before, after afterID, in id order.
func (r Reads) DueDeliveries(ctx context.Context, before time.Time, afterID string, limit int) ([]hookd.Delivery, error) {
	d, q, cols := r.dialect, r.q, r.cols.Delivery
	out, err := collectFrom(ctx, q, d.Bind(`SELECT `+cols+` FROM hookd_deliveries d
		WHERE d.status = 'pending' AND d.id > ? AND COALESCE(d.next_attempt_at, d.created_at) <= ?
		ORDER BY d.id LIMIT ?`), []any{afterID, d.Time(before), limit}, d.ScanDelivery)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return out, nil
}

// ParkedDeliveries returns the endpoint's parked deliveries (pending, no next attempt time) after
// afterID, in id order.
func (r Reads) ParkedDeliveries(ctx context.Context, endpointID, afterID string, limit int) ([]hookd.Delivery, error) {
	d, q, cols := r.dialect, r.q, r.cols.Delivery
	out, err := collectFrom(ctx, q, d.Bind(`SELECT `+cols+` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'pending' AND d.id > ? AND d.next_attempt_at IS NULL
		ORDER BY d.id LIMIT ?`), []any{endpointID, afterID, limit}, d.ScanDelivery)
	if err != nil {
		return nil, fmt.Errorf("parked deliveries to endpoint %s: %w", endpointID, err)
	}
	return out, nil
}

// EnabledEndpoints returns the application's enabled endpoints ordered by id.
func (r Reads) EnabledEndpoints(ctx context.Context, appID string) ([]hookd.Endpoint, error) {
	d, q, cols := r.dialect, r.q, r.cols.Endpoint
	out, err := collectFrom(ctx, q, d.Bind(`SELECT `+cols+` FROM hookd_endpoints e
		WHERE e.app_id = ? AND `+d.Not("e.disabled")+` ORDER BY e.id`), []any{appID}, d.ScanEndpoint)
	if err != nil {
		return nil, fmt.Errorf("enabled endpoints of application %s: %w", appID, err)
	}
	return out, nil
}

// SigningKeys returns the endpoint's keys newest first (by creation time, then insertion),
// expired ones included; none for an endpoint that does not exist.
func (r Reads) SigningKeys(ctx context.Context, endpointID string) ([]hookd.SigningKey, error) {
	d, q := r.dialect, r.q
	out, err := collectFrom(ctx, q, d.Bind(`SELECT secret, created_at, expires_at FROM hookd_endpoint_keys
		WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC`), []any{endpointID}, d.ScanSigningKey)
	if err != nil {
		return nil, fmt.Errorf("signing keys of endpoint %s: %w", endpointID, err)
	}
	return out, nil
}

// collectFrom runs query on q and reads every row with scan. No row gives nil.
func collectFrom[T any](ctx context.Context, q Querier, query string, args []any, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	err := q.Query(ctx, query, args, func(r Scanner) error {
		item, err := scan(r)
		out = append(out, item)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
