// Command hookd is the operator's tool for hookd: it generates secrets, verifies signatures, and
// (in later commands) runs the server and drives it.
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
