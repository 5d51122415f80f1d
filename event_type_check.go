package hookd

import (
	"context"
	"errors"
	"fmt"
)

// MissingEventTypes returns the names among names that are not event types, or are archived, in
// the order given and each once. On a store that looks them up in one statement (both of this
// module's do) it is one read; otherwise one GetEventType a name.
func (c *Client) MissingEventTypes(ctx context.Context, names []string) ([]string, error) {
	unique := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			unique = append(unique, n)
		}
	}
	active, err := c.activeEventTypes(ctx, unique)
	if err != nil {
		return nil, fmt.Errorf("hookd: look up %d event types: %w", len(unique), err)
	}
	var missing []string
	for _, n := range unique {
		if !active[n] {
			missing = append(missing, n)
		}
	}
	return missing, nil
}

func (c *Client) activeEventTypes(ctx context.Context, names []string) (map[string]bool, error) {
	if br, ok := c.store.(EventTypeBatchReader); ok {
		return br.ActiveEventTypes(ctx, names)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		et, err := c.store.GetEventType(ctx, n)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		out[n] = !et.Archived
	}
	return out, nil
}
