package sqlite

import (
	"fmt"

	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/riverqueue"
)

// NewQueue returns a River queue in the store's own file, so that jobs commit in the same
// transaction as the deliveries they carry. The store holds the file's process lock, so the
// queue takes over at start the jobs a crashed process left running (RescueOnStart).
func (s *Store) NewQueue(cfg *hookd.QueueConfig) (hookd.Queue, error) {
	q, err := riverqueue.New(riversqlite.New(s.db), cfg, s.logger, &riverqueue.Config{RescueOnStart: true})
	if err != nil {
		return nil, fmt.Errorf("new sqlite queue: %w", err)
	}
	return q, nil
}
