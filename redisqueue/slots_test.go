package redisqueue_test

import (
	"testing"

	"github.com/hookd/hookd/internal/slottest"
)

// TestSlotLeaser runs the slot leaser's checks on the queue, in a namespace of the test's own.
func TestSlotLeaser(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	slottest.Run(t, newQueue(t, u, openStore(t), nil, nil))
}
