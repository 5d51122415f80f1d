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
	acquireSlotsSQL = `SELECT granted, contenders FROM hookd_acquire_slots($1, $2, $3, $4, $5,
		$6 * interval '1 microsecond', $7 * interval '1 microsecond')`
	// renewSlotsSQL counts each renewed endpoint's live rows in the snapshot before the update,
	// in which the holder's own row is live already.
	renewSlotsSQL = `WITH r AS (UPDATE hookd_endpoint_slots SET lease_until = now() + $3 * interval '1 microsecond'
			WHERE endpoint_id = ANY($2) AND holder = $1 AND slots > 0 AND lease_until > now() RETURNING endpoint_id)
		SELECT r.endpoint_id, (SELECT count(*) FROM hookd_endpoint_slots s
			WHERE s.endpoint_id = r.endpoint_id AND s.lease_until > now()) FROM r`
	releaseSlotsSQL = `UPDATE hookd_endpoint_slots SET slots = $3 WHERE endpoint_id = $1 AND holder = $2 AND slots > $3`
	dropSlotsSQL    = `DELETE FROM hookd_endpoint_slots WHERE endpoint_id = $1 AND holder = $2`
)

// AcquireSlots grants holder up to want slots of the endpoint beyond held, within capacity for
// every live holder, and counts the contenders (hookd.SlotLeaser), in one round trip.
func (s *Store) AcquireSlots(ctx context.Context, holder, endpointID string, held, want, capacity int, lease time.Duration) (int, int, error) {
	var granted, contenders int
	err := s.pool.QueryRow(ctx, acquireSlotsSQL, endpointID, holder, held, want, capacity,
		lease.Microseconds(), hookd.SlotWantLease.Microseconds()).Scan(&granted, &contenders)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: acquire slots of endpoint %s: %w", endpointID, err)
	}
	return granted, contenders, nil
}

// RenewSlots extends the leases of holder's slots of the endpoints given, in one statement, and
// returns those it renewed with their contenders.
func (s *Store) RenewSlots(ctx context.Context, holder string, endpointIDs []string, lease time.Duration) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, renewSlotsSQL, holder, endpointIDs, lease.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: renew slots: %w", err)
	}
	defer rows.Close()
	renewed := map[string]int{}
	for rows.Next() {
		var id string
		var contenders int
		if err := rows.Scan(&id, &contenders); err != nil {
			return nil, fmt.Errorf("postgres: renew slots: %w", err)
		}
		renewed[id] = contenders
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
