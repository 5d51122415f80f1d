package bus

import (
	"context"
	"fmt"
)

// Handler handles one event. It must be idempotent: it may run more than once for one event.
type Handler func(ctx context.Context, d *Dispatch) error

type namedHandler struct {
	name string
	h    Handler
}

// Subscribe adds handler h for the events named name. An event's handlers run one after another,
// in the order they were added; errors name a handler by that order ("handler 2 of
// tenancy.invitation.created").
func (b *Bus) Subscribe(name string, h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	label := fmt.Sprintf("handler %d of %s", len(b.handlers[name])+1, name)
	b.handlers[name] = append(b.handlers[name], namedHandler{name: label, h: h})
}
