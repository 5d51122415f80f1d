package sqlite

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

const operationalEventCols = `o.id, o.type, o.app_id, o.endpoint_id, o.message_id, o.reason, o.at`

const insertOperationalEventSQL = `INSERT INTO hookd_operational_events
	(id, type, app_id, endpoint_id, message_id, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?)`

// InsertOperationalEvents writes operational events. They reference nothing: they outlive the
// applications, endpoints and messages they name.
func (t *txn) InsertOperationalEvents(ctx context.Context, evs []hookd.OperationalEvent) error {
	if len(evs) == 0 {
		return nil
	}
	st := t.stmt(ctx, t.stmts.insertOperationalEvent)
	for i := range evs {
		ev := &evs[i]
		_, err := st.ExecContext(ctx, ev.ID, ev.Type, ev.AppID, ev.EndpointID, ev.MessageID, ev.Reason, micros(ev.At))
		if err != nil {
			return fmt.Errorf("insert operational event %s: %w", ev.ID, classify(err))
		}
	}
	return nil
}
