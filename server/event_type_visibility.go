package server

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/paging"
)

// hiddenEventTypes returns the names among names of event types the caller may not see
// (Principal.SeesEventType), so that a filter on one is refused as a filter on an event type that
// does not exist. The admin sees every one: nothing is read. For an app-portal token the
// catalogue's flagged event types are read a page at a time, whatever the number of names.
func (s *Server) hiddenEventTypes(ctx context.Context, rc *reqCtx, names []string) (map[string]bool, error) {
	if rc.principal.AppID == "" || len(names) == 0 {
		return nil, nil
	}
	asked := make(map[string]bool, len(names))
	for _, n := range names {
		asked[n] = true
	}
	hidden := map[string]bool{}
	opts := hookd.ListOptions{Limit: paging.MaxLimit}
	for {
		page, err := s.client.ListEventTypes(ctx, false, opts)
		if err != nil {
			return nil, fmt.Errorf("server: read the event types' feature flags: %w", err)
		}
		for i := range page.Data {
			if et := &page.Data[i]; asked[et.Name] && !rc.principal.SeesEventType(et) {
				hidden[et.Name] = true
			}
		}
		if page.Done || page.Iterator == "" {
			return hidden, nil
		}
		opts.Iterator = page.Iterator
	}
}
