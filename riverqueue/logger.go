package riverqueue

import (
	"context"
	"log/slog"
)

// riverLogger returns the logger given to River. River logs at Info on every job error, retry and
// stop, which would drown an application's Info log, so River gets the caller's logger with
// records below Warn dropped. A caller whose logger is enabled at Debug asked for detail and gets
// all of River's records. A nil logger means slog.Default().
func riverLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	l = l.With(slog.String("component", "river"))
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(&minLevelHandler{next: l.Handler(), min: slog.LevelWarn})
}

// minLevelHandler passes to next only records at min or above.
type minLevelHandler struct {
	next slog.Handler
	min  slog.Level
}

func (h *minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.next.Enabled(ctx, l)
}

func (h *minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h *minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &minLevelHandler{next: h.next.WithAttrs(attrs), min: h.min}
}

func (h *minLevelHandler) WithGroup(name string) slog.Handler {
	return &minLevelHandler{next: h.next.WithGroup(name), min: h.min}
}
