package redisqueue

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hibiken/asynq"
)

// asynqLogger passes asynq's records to a *slog.Logger. asynq logs at Info on every server start
// and shutdown, which would drown an application's Info log, so its level is Warn unless the
// logger is enabled at Debug: a caller who asked for detail gets all of asynq's records.
type asynqLogger struct{ l *slog.Logger }

var _ asynq.Logger = asynqLogger{}

// newAsynqLogger returns the logger and the level to give an asynq server.
func newAsynqLogger(l *slog.Logger) (asynq.Logger, asynq.LogLevel) {
	level := asynq.WarnLevel
	if l.Enabled(context.Background(), slog.LevelDebug) {
		level = asynq.DebugLevel
	}
	return asynqLogger{l: l.With(slog.String("component", "asynq"))}, level
}

func (a asynqLogger) log(level slog.Level, args []any) {
	a.l.Log(context.Background(), level, fmt.Sprint(args...))
}

func (a asynqLogger) Debug(args ...any) { a.log(slog.LevelDebug, args) }
func (a asynqLogger) Info(args ...any)  { a.log(slog.LevelInfo, args) }
func (a asynqLogger) Warn(args ...any)  { a.log(slog.LevelWarn, args) }
func (a asynqLogger) Error(args ...any) { a.log(slog.LevelError, args) }

// Fatal logs at Error: a library does not end the process (asynq itself never calls it).
func (a asynqLogger) Fatal(args ...any) { a.log(slog.LevelError, args) }
