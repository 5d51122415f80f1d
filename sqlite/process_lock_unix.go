//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked: another process has the database open through hookd.
var ErrLocked = errors.New("another hookd process has this database open")

// processLock holds an exclusive lock on path+".lock" for as long as the store is open, so that
// one process at a time runs hookd on a file: the queue keeps its running jobs in memory and takes
// over the jobs a dead process left running, which is right only when no live process has them.
type processLock struct{ f *os.File }

func lockFile(path string) (*processLock, error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s); stop it, or use PostgreSQL for several processes", ErrLocked, path)
		}
		return nil, fmt.Errorf("lock %s.lock: %w", path, err)
	}
	return &processLock{f: f}, nil
}

func (l *processLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close() // closing the descriptor releases the lock
}
