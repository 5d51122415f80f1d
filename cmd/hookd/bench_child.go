package main

import (
	"context"

	"github.com/hookd/hookd/cmd/hookd/internal/bench"
)

// benchChildren are the hidden subcommands of "hookd bench" that "hookd bench --apart" starts
// as child processes of its own binary: the receiver and the sender. Neither takes a flag; each
// writes "listening on URL" on stderr and is driven over HTTP by the bench until it ends.
var benchChildren = map[string]func(ctx context.Context, e *env) error{
	"receiver": func(ctx context.Context, e *env) error { return bench.RunReceiver(ctx, e.stderr) },
	"sender":   func(ctx context.Context, e *env) error { return bench.RunSender(ctx, e.stderr) },
}
