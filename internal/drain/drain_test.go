package drain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWaitJobsEndFirst(t *testing.T) {
	done := make(chan struct{})
	close(done)
	if err := Wait(context.Background(), "q", done, func() { t.Error("cancelled jobs that had ended") }); err != nil {
		t.Fatal(err)
	}
}

func TestWaitCancelsWhenContextEnds(t *testing.T) {
	done := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	stop()
	err := Wait(ctx, "q", done, func() { close(done) })
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "q: stop: jobs in flight cancelled") {
		t.Fatalf("err = %v", err)
	}
}

func TestWaitGivesUpAfterHardStop(t *testing.T) {
	if testing.Short() {
		t.Skip("waits HardStop")
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	began := time.Now()
	err := Wait(ctx, "q", make(chan struct{}), func() {})
	if !strings.Contains(err.Error(), "still running after 5s") || time.Since(began) < HardStop {
		t.Fatalf("err = %v after %s", err, time.Since(began))
	}
}
