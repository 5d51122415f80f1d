package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/hookd/hookd/internal/outage"
)

// asynqLogger passes asynq's records to a *slog.Logger. asynq logs at Info on every server start
// and shutdown, which would drown an application's Info log, so its level is Warn unless the
// logger is enabled at Debug: a caller who asked for detail gets all of asynq's records.
//
// asynq logs a warning or an error on every try of its loops while Redis is away (a dequeue, a
// forward of scheduled tasks: about 25 lines a second). Those go through package outage, one
// cause per message (its text up to the first colon): one line when it begins, a summary every
// 30 s. asynq tells no success; the queue ends them (outage.Log.OK) when Redis answers again.
type asynqLogger struct {
	l   *slog.Logger
	out *outage.Log
}

var _ asynq.Logger = asynqLogger{}

// maxAsynqCauses bounds the causes made of asynq's messages; past it they share one.
const maxAsynqCauses = 32

// newAsynqLogger returns the logger and the level to give an asynq server; its warnings and
// errors are outages of out.
func newAsynqLogger(l *slog.Logger, out *outage.Log) (asynq.Logger, asynq.LogLevel) {
	level := asynq.WarnLevel
	if l.Enabled(context.Background(), slog.LevelDebug) {
		level = asynq.DebugLevel
	}
	return asynqLogger{l: l.With(slog.String("component", "asynq")), out: out}, level
}

func (a asynqLogger) log(level slog.Level, args []any) {
	msg := fmt.Sprint(args...)
	if level < slog.LevelWarn {
		a.l.Log(context.Background(), level, msg)
		return
	}
	what, _, _ := strings.Cut(msg, ":")
	if len(what) > 80 || a.out.Len() >= maxAsynqCauses {
		what = "other"
	}
	a.out.Cause("asynq: " + what).Fail(errors.New(msg))
}

func (a asynqLogger) Debug(args ...any) { a.log(slog.LevelDebug, args) }
func (a asynqLogger) Info(args ...any)  { a.log(slog.LevelInfo, args) }
func (a asynqLogger) Warn(args ...any)  { a.log(slog.LevelWarn, args) }
func (a asynqLogger) Error(args ...any) { a.log(slog.LevelError, args) }

// Fatal logs at Error: a library does not end the process (asynq itself never calls it).
func (a asynqLogger) Fatal(args ...any) { a.log(slog.LevelError, args) }

// ClientLogger is a logger for go-redis's own lines (redis.SetLogger), which it writes to the
// standard error by default, one for each dial that fails while Redis is away: they become
// outages of the queue's, as asynq's warnings do (one cause per message, up to its first colon),
// ended when Redis answers again. go-redis has one logger per process: the program sets it, once.
func (q *Queue) ClientLogger() interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return clientLogger{q.asynqFails}
}

// clientLogger is Queue.ClientLogger.
type clientLogger struct{ out *outage.Log }

func (c clientLogger) Printf(_ context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	// go-redis's lines start with "redis: ".
	what, _, _ := strings.Cut(strings.TrimPrefix(msg, "redis: "), ":")
	if len(what) > 80 || c.out.Len() >= maxAsynqCauses {
		what = "other"
	}
	c.out.Cause("redis client: " + what).Fail(errors.New(msg))
}
