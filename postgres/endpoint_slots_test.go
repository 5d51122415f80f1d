package postgres_test

import (
	"testing"

	"github.com/hookd/hookd/internal/slottest"
)

// TestSlotLeaser runs the slot leaser's checks on the store (hookd_endpoint_slots).
func TestSlotLeaser(t *testing.T) {
	t.Parallel()
	slottest.Run(t, setup(t).store)
}
