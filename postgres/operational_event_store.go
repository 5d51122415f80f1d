package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

const operationalEventCols = `o.id, o.type, o.app_id, o.endpoint_id, o.message_id, o.reason, o.at`

// InsertOperationalEvents writes operational events, in one statement. They reference nothing:
// they outlive the applications, endpoints and messages they name.
func (t *txn) InsertOperationalEvents(ctx context.Context, evs []hookd.OperationalEvent) error {
	if len(evs) == 0 {
		return nil
	}
	n := len(evs)
	var (
		ids, types, appIDs      = make([]string, n), make([]string, n), make([]string, n)
		endpointIDs, messageIDs = make([]string, n), make([]string, n)
		reasons                 = make([]string, n)
		ats                     = make([]time.Time, n)
	)
	for i := range evs {
		ev := &evs[i]
		ids[i], types[i], appIDs[i], endpointIDs[i] = ev.ID, ev.Type, ev.AppID, ev.EndpointID
		messageIDs[i], reasons[i], ats[i] = ev.MessageID, ev.Reason, ev.At
	}
	_, err := t.c.exec(ctx, `INSERT INTO hookd_operational_events (id, type, app_id, endpoint_id, message_id, reason, at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
		ids, types, appIDs, endpointIDs, messageIDs, reasons, ats)
	if err != nil {
		return fmt.Errorf("insert operational events %s..%s: %w", evs[0].ID, evs[n-1].ID, classify(err))
	}
	return nil
}
