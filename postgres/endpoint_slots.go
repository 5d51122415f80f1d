package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

var _ hookd.SlotLeaser = (*Store)(nil)

// The statements of the slot leases (hookd_endpoint_slots, migration 12). An acquisition is one
// call of hookd_acquire_slots, which serialises the endpoint's acquisitions; a renewal and a
// release lower no one else's share, so they need no turn. Leases are on the database's clock,
// which every process shares.
const (
	acquireSlotsSQL = `SELECT hookd_acquire_slots($1, $2, $3, $4, $5, $6 * interval '1 microsecond')`
	renewSlotsSQL   = `UPDATE hookd_endpoint_slots SET lease_until = now() + $3 * interval '1 microsecond'
		WHERE endpoint_id = ANY($2) AND holder = $1 AND lease_until > now() RETURNING endpoint_id`
	releaseSlotsSQL = `UPDATE hookd_endpoint_slots SET slots = $3 WHERE endpoint_id = $1 AND holder = $2 AND slots > $3`
	dropSlotsSQL    = `DELETE FROM hookd_endpoint_slots WHERE endpoint_id = $1 AND holder = $2`
)

// AcquireSlots grants holder up to want slots of the endpoint beyond held, within capacity for
// every live holder (hookd.SlotLeaser), in one round trip.
func (s *Store) AcquireSlots(ctx context.Context, holder, endpointID string, held, want, capacity int, lease time.Duration) (int, error) {
	var granted int
	if err := s.pool.QueryRow(ctx, acquireSlotsSQL, endpointID, holder, held, want, capacity, lease.Microseconds()).Scan(&granted); err != nil {
		return 0, fmt.Errorf("postgres: acquire slots of endpoint %s: %w", endpointID, err)
	}
	return granted, nil
}

// RenewSlots extends the leases of holder's slots of the endpoints given, in one statement, and
// returns those it renewed.
func (s *Store) RenewSlots(ctx context.Context, holder string, endpointIDs []string, lease time.Duration) ([]string, error) {
	rows, err := s.pool.Query(ctx, renewSlotsSQL, holder, endpointIDs, lease.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: renew slots: %w", err)
	}
	defer rows.Close()
	var renewed []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("postgres: renew slots: %w", err)
		}
		renewed = append(renewed, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: renew slots: %w", err)
	}
	return renewed, nil
}

// ReleaseSlots gives back all but keep of holder's slots of the endpoint.
func (s *Store) ReleaseSlots(ctx context.Context, holder, endpointID string, keep int) error {
	var err error
	if keep <= 0 {
		_, err = s.pool.Exec(ctx, dropSlotsSQL, endpointID, holder)
	} else {
		_, err = s.pool.Exec(ctx, releaseSlotsSQL, endpointID, holder, keep)
	}
	if err != nil {
		return fmt.Errorf("postgres: release slots of endpoint %s: %w", endpointID, err)
	}
	return nil
}
