//go:build !unix

package sqlite

import "errors"

// ErrLocked: another process has the database open through hookd.
var ErrLocked = errors.New("another hookd process has this database open")

// processLock is a no-op where flock is not available: run one hookd process per file.
type processLock struct{}

func lockFile(string) (*processLock, error) { return &processLock{}, nil }

func (*processLock) release() error { return nil }
