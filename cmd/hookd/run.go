package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Exit codes, documented in the usage text.
const (
	exitOK      = 0 // success
	exitFailure = 1 // the command ran and the answer is "no" (a signature did not verify) or it failed
	exitUsage   = 2 // the command line was wrong; the message says how to fix it
)

// env is what a command may touch: its standard streams.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	serverWait time.Duration // how long a client command waits for hookd serve to accept connections; 0: defaultServerWait
}

// command is one subcommand: its name, one line of help, and the function that runs it.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"secret", "generate signing secrets (secret new [--ed25519])", runSecret},
		{"verify", "verify a webhook signature read from stdin", runVerify},
		{"listen", "a local receiver that verifies and prints each webhook", runListen},
		{"demo", "deliver one event to four local endpoints and print the attempt log", runDemo},
		{"pitfall", "measure sending inline against queueing, and one hanging endpoint", runPitfall},
		{"bench", "measure throughput and latency on a fresh database (B1, B2, B3)", runBench},
		{"serve", "run the workers and the HTTP API, with /metrics", runServe},
		{"migrate", "bring the database's schema up to date and exit", runMigrate},
		{"backup", "copy a SQLite database to a file while serve runs (backup OUT)", runBackup},
		{"token", "mint a new admin token and revoke the old one (token rotate)", runToken},
		{"events", "list and re-drive the event bus's dead letters (events list|redrive)", runEvents},
		{"app", "create, list, show, update and delete applications on a running hookd serve", runApp},
		{"endpoint", "add, list, show, update, delete, disable and enable endpoints; their stats and secrets", runEndpoint},
		{"event-type", "create (or add), list and delete event types", runEventType},
		{"send", "send a message to an application's endpoints", runSend},
		{"messages", "list an application's messages", runMessages},
		{"message", "show one message with its payload (message get APP MSG)", runMessage},
		{"attempts", "list delivery attempts of a message or to an endpoint", runAttempts},
		{"resend", "send a message to an endpoint again", runResend},
		{"recover", "resend what failed to reach an endpoint since a time", runRecover},
		{"portal-link", "print a link to an application's customer portal (portal-link APP)", runPortalLink},
		{"version", "print the version, VCS revision and Go version (also --version)", runVersion},
	}
}

// exitError carries an exit code and a message for the user; hint says how to fix it. status is
// the HTTP status of the API's answer the error reports (0: none).
type exitError struct {
	code   int
	msg    string
	hint   string
	status int
}

func (e *exitError) Error() string { return e.msg }

func usageErrorf(hint, format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...), hint: hint}
}

func failf(hint, format string, args ...any) error {
	return &exitError{code: exitFailure, msg: fmt.Sprintf(format, args...), hint: hint}
}

// Run runs the hookd command line and returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	return e.run(ctx, args)
}

func (e *env) run(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		return e.report(err)
	}
	fmt.Fprintf(e.stderr, "hookd: unknown command %q\nhint: run \"hookd --help\" for the list of commands\n", args[0])
	return exitUsage
}

// report prints err (if any) to stderr with its hint and returns the exit code it stands for.
func (e *env) report(err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var xe *exitError
	if errors.As(err, &xe) {
		fmt.Fprintf(e.stderr, "hookd: %s\n", xe.msg)
		if xe.hint != "" {
			fmt.Fprintf(e.stderr, "hint: %s\n", xe.hint)
		}
		return xe.code
	}
	fmt.Fprintf(e.stderr, "hookd: %v\n", err)
	return exitFailure
}

func printUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString("hookd: signed, retryable outgoing webhooks\n\nUsage:\n  hookd <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-12s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun \"hookd <command> --help\" for a command's flags.\n")
	b.WriteString("\nExit codes:\n  0  success\n  1  the check failed (for verify: the signature is not valid) or the command failed\n  2  usage error: a wrong or missing flag or argument\n")
	io.WriteString(w, b.String())
}

// flags is a subcommand's FlagSet with its usage line; it reports errors instead of exiting.
type flags struct {
	*flag.FlagSet
	e     *env
	usage string
}

func newFlags(e *env, name, usage string) *flags {
	fs := flag.NewFlagSet("hookd "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, e: e, usage: usage}
}

// parse parses args: --help prints the flags to stdout, a flag error or a stray argument is a
// usage error that points at --help.
func (f *flags) parse(args []string) error {
	hint := fmt.Sprintf("run \"%s --help\" for the flags", f.Name())
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.printHelp()
			return err
		}
		return usageErrorf(hint, "%v", err)
	}
	if f.NArg() > 0 {
		return usageErrorf(hint, "unexpected argument %q", f.Arg(0))
	}
	return nil
}

func (f *flags) printHelp() {
	w := f.e.stdout
	fmt.Fprintf(w, "Usage: hookd %s\n\nFlags:\n", f.usage)
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	fmt.Fprint(w, "\nExit codes: 0 success, 1 check failed, 2 usage error.\n")
}
