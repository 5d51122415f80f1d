package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/sqlite"
)

// withDeliveries inserts, in the enqueuing transaction, a pending delivery for each first
// scheduled attempt before enqueuing it, as Send does, so that the delivery row is the job. It
// runs the queue suite on the deliveries' own first jobs.
type withDeliveries struct {
	hookd.Queue
	// inTx runs a transaction of the store (nil: a job's delivery is left as it is).
	inTx func(context.Context, func(hookd.Tx) error) error
}

// Start starts the queue with h, after which a first scheduled attempt whose handler returns nil
// ends its delivery (delivered), as hookd's worker ends it or moves it on before its job is done:
// a pending delivery left without a job is one the queue gives a job again when it starts.
func (q withDeliveries) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil || q.inTx == nil {
		return q.Queue.Start(ctx, h)
	}
	return q.Queue.Start(ctx, func(ctx context.Context, j hookd.Job) error {
		if err := h(ctx, j); err != nil || j.Attempt != 1 || j.Trigger != hookd.TriggerScheduled {
			return err
		}
		return q.inTx(ctx, func(tx hookd.Tx) error {
			d, err := tx.GetDelivery(ctx, j.DeliveryID)
			if errors.Is(err, hookd.ErrNotFound) || (err == nil && d.Status != hookd.DeliveryPending) {
				return nil
			}
			if err != nil {
				return err
			}
			return tx.SetDeliveryStatus(ctx, j.DeliveryID, hookd.DeliveryDelivered, nil, "", time.Now())
		})
	})
}

func (q withDeliveries) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	if tx == nil { // the suite's unsupported transactions, for the queue to refuse
		return q.Queue.EnqueueTx(ctx, tx, jobs)
	}
	if _, ok := tx.Raw().(*sql.Tx); !ok {
		return q.Queue.EnqueueTx(ctx, tx, jobs)
	}
	now := time.Now()
	var ds []hookd.Delivery
	for _, j := range jobs {
		if j.Attempt != 1 || j.Trigger != hookd.TriggerScheduled {
			continue
		}
		if _, err := tx.GetDelivery(ctx, j.DeliveryID); err == nil {
			continue
		}
		ds = append(ds, hookd.Delivery{ID: j.DeliveryID, MessageID: "msg_q", EndpointID: "ep_" + j.DeliveryID,
			AppID: "app_q", Status: hookd.DeliveryPending, CreatedAt: now, UpdatedAt: now})
	}
	if len(ds) > 0 {
		if _, err := tx.GetMessage(ctx, "app_q", "msg_q"); err != nil {
			app := hookd.Application{ID: "app_q", Name: "q", CreatedAt: now, UpdatedAt: now}
			if err := tx.InsertApplication(ctx, &app); err != nil {
				return err
			}
			msg := hookd.Message{ID: "msg_q", AppID: "app_q", EventType: "q", CreatedAt: now}
			if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
				return err
			}
		}
		if err := tx.InsertDeliveries(ctx, ds); err != nil {
			return err
		}
	}
	return q.Queue.EnqueueTx(ctx, tx, jobs)
}

// TestQueueConformanceOwnFirstJobs runs the queue suite with every first scheduled attempt's
// delivery row in the file, so that those jobs are the delivery rows' own. It is not parallel,
// so that the suite's timing tests run alone.
func TestQueueConformanceOwnFirstJobs(t *testing.T) {
	timing := 1.0
	if raceEnabled {
		timing = 10
	}
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: logcheck.New(t).Logger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// The suite's first jobs were the deliveries' own: none went to hookd_jobs but
				// those a snooze, a failure or a NotBefore put there.
				var first int
				if err := s.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM hookd_jobs
					WHERE lane = 'first' AND failures = 0 AND not_before IS NULL AND trigger_kind = 'scheduled'
						AND last_error = '' AND attempt = 1`).Scan(&first); err != nil {
					t.Errorf("count first jobs: %v", err)
				} else if first != 0 {
					t.Errorf("%d first jobs in hookd_jobs that their deliveries should have been", first)
				}
				_ = s.Close()
			})
			q, err := s.NewQueue(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return withDeliveries{Queue: q, inTx: s.InTx}, s.InTx
		},
		Timing: timing,
	})
}
