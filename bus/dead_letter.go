package bus

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

// Failed returns up to limit dead-lettered events, in id order after the id after ("": from the
// first).
func (b *Bus) Failed(ctx context.Context, after string, limit int) ([]Record, error) {
	if limit <= 0 || limit > 1000 {
		return nil, fmt.Errorf("bus: failed: %w", &hookd.ValidationError{Field: "limit", Reason: fmt.Sprintf("is %d; use 1 to 1000", limit)})
	}
	out, err := b.out.ListEvents(ctx, StatusFailed, after, limit)
	if err != nil {
		return nil, fmt.Errorf("bus: failed: %w", err)
	}
	return out, nil
}

// Redrive makes a dead-lettered event pending again, with its attempts counted from zero, and
// dispatches it at the next poll. An id that names no failed event is hookd.ErrNotFound.
func (b *Bus) Redrive(ctx context.Context, id string) error {
	if err := b.out.RedriveEvent(ctx, id, b.cfg.Now()); err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
	return nil
}
