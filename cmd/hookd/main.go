// Command hookd is the operator's tool for hookd: it runs the server (serve, migrate, token),
// drives a running server through its API (app, endpoint, send, attempts, ...), generates
// secrets, verifies signatures, and demonstrates and measures hookd (demo, pitfall, bench).
// run.go's commands() lists every command.
//
// main only maps the outcome of Run to an exit code; everything else lives in testable functions.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
