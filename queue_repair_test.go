package hookd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// repairBackend is a backend of the queue repair's tests.
type repairBackend struct {
	orderedBackend
	// dropJob deletes a delivery's jobs from the queue's table in the database; nil for a queue
	// outside it (Redis), whose deliveries are written without their jobs instead.
	dropJob func(t *testing.T, store hookd.Store, deliveryID string)
	// logsRepair is set for the queues that repair at start and log the line the test reads.
	logsRepair bool
}

// repairBackends are the store's own queues (SQLite, PostgreSQL), River's queue on PostgreSQL
// and the Redis queue, whose sweeper does the repair's work.
var repairBackends = []repairBackend{
	{orderedBackends[0], func(t *testing.T, store hookd.Store, id string) {
		db := store.(*sqlite.Store).DB()
		if _, err := db.ExecContext(t.Context(), `DELETE FROM hookd_jobs WHERE delivery_id = ?`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), `UPDATE hookd_deliveries SET first_job = 0 WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
	}, true},
	{orderedBackends[1], func(t *testing.T, store hookd.Store, id string) {
		if _, err := store.(*postgres.Store).Pool().Exec(t.Context(), `DELETE FROM hookd_jobs WHERE delivery_id = $1;`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := store.(*postgres.Store).Pool().Exec(t.Context(), `UPDATE hookd_deliveries SET first_job = false WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}, true},
	{orderedBackend{"postgres+river", func(t *testing.T, log *logcheck.Log) (hookd.Store, hookd.Queue) {
		s, _ := orderedBackends[1].open(t, log)
		q, err := s.(*postgres.Store).NewRiverQueue(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s, q
	}}, func(t *testing.T, store hookd.Store, id string) {
		if _, err := store.(*postgres.Store).Pool().Exec(t.Context(), `DELETE FROM river_job WHERE args->>'d' = $1`, id); err != nil {
			t.Fatal(err)
		}
	}, true},
	{orderedBackends[2], nil, false},
}

// repairedLine matches the line a queue's repair logs, with how many deliveries it gave a job.
var repairedLine = regexp.MustCompile(`level=WARN msg="hookd queue: gave a job to each pending delivery that had none" deliveries=(\d+)`)

// TestQueueStartGivesStrandedDeliveriesJobs: pending deliveries that no queue holds a job for
// (written without one, or whose job was deleted) are delivered once the client starts: a first
// attempt, a retry due, a retry due later (not before its time), and an ordered endpoint's head
// left parked with no job when the delivery before it ended, then the deliveries parked behind
// it, in order. Deliveries parked behind a head that has its job are left to it: the repair
// counts the 4 stranded deliveries only, in one line.
func TestQueueStartGivesStrandedDeliveriesJobs(t *testing.T) {
	for _, be := range repairBackends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			log := logcheck.New(t)
			store, queue := be.open(t, log)
			if queue == nil {
				var err error
				if queue, err = store.NewQueue(nil); err != nil {
					t.Fatal(err)
				}
			}
			recv := hookdtest.NewReceiver()
			t.Cleanup(recv.Close)
			cfg := testConfig()
			cfg.Queue, cfg.Logger = queue, log.Logger()
			c, err := hookd.NewClient(store, cfg)
			if err != nil {
				t.Fatal(err)
			}
			app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme"})
			if err != nil {
				t.Fatal(err)
			}
			eps := map[string]*hookd.Endpoint{}
			for _, path := range []string{"/plain", "/stuck", "/live"} {
				if eps[path], err = c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL(path), Ordered: path != "/plain"}); err != nil {
					t.Fatal(err)
				}
			}

			// Every delivery is written as a process would leave it, through the store and the
			// queue alone; created a minute ago, so that the Redis queue's sweeper finds them due.
			created := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
			later := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Microsecond)
			type row struct {
				seq      int
				path     string
				attempts int        // failed attempts recorded
				next     *time.Time // the next attempt's time (nil: parked)
				job      bool       // enqueued in the transaction that writes it
				park     bool       // parked behind the delivery before it
				drop     bool       // enqueued, and its job then deleted (written without one on Redis)
			}
			rows := []row{
				{seq: 0, path: "/plain", next: &created},
				{seq: 1, path: "/plain", attempts: 1, next: &created, drop: true},
				{seq: 2, path: "/plain", attempts: 1, next: &later},
				// The stuck endpoint's head (3) ends below with no advance: 4 is then a parked
				// head without a job, and 5 and 6 wait behind it.
				{seq: 3, path: "/stuck", next: &created, job: true},
				{seq: 4, path: "/stuck", park: true},
				{seq: 5, path: "/stuck", park: true},
				{seq: 6, path: "/stuck", park: true},
				// The live endpoint's head has its job: the deliveries parked behind it need none.
				{seq: 7, path: "/live", next: &created, job: true},
				{seq: 8, path: "/live", park: true},
				{seq: 9, path: "/live", park: true},
			}
			id := func(seq int) string { return fmt.Sprintf("dlv_repair_%02d", seq) }
			for _, r := range rows {
				ep := eps[r.path]
				msg := hookd.Message{ID: fmt.Sprintf("msg_repair_%02d", r.seq), AppID: app.ID, EventType: "invoice.paid",
					Payload: json.RawMessage(fmt.Sprintf(`{"seq":%d}`, r.seq)), CreatedAt: created}
				d := hookd.Delivery{ID: id(r.seq), MessageID: msg.ID, EndpointID: ep.ID, AppID: app.ID,
					Status: hookd.DeliveryPending, NextAttemptAt: &created, CreatedAt: created, UpdatedAt: created}
				enqueue := r.job || (r.drop && be.dropJob != nil)
				err := store.InTx(ctx, func(tx hookd.Tx) error {
					if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
						return err
					}
					if err := tx.InsertDeliveries(ctx, []hookd.Delivery{d}); err != nil {
						return err
					}
					if r.park {
						parked, err := tx.ParkDelivery(ctx, d.ID, ep.ID, created)
						if err == nil && !parked {
							err = fmt.Errorf("delivery %d not parked", r.seq)
						}
						return err
					}
					// Ending the first job (a recorded attempt, a status set) leaves no job.
					if r.attempts > 0 {
						a := hookd.Attempt{ID: fmt.Sprintf("atmpt_repair_%02d", r.seq), DeliveryID: d.ID, MessageID: msg.ID,
							EndpointID: ep.ID, AppID: app.ID, Number: 1, Trigger: hookd.TriggerScheduled, URL: ep.URL,
							At: created, StatusCode: 500, Error: "HTTP 500"}
						if err := tx.RecordAttempts(ctx, []hookd.AttemptRecord{{Attempt: a, Status: hookd.DeliveryPending, NextAttemptAt: r.next}}); err != nil {
							return err
						}
					} else if err := tx.SetDeliveryStatus(ctx, d.ID, hookd.DeliveryPending, r.next, "", created); err != nil {
						return err
					}
					if !enqueue {
						return nil
					}
					return queue.EnqueueTx(ctx, tx, []hookd.Job{{DeliveryID: d.ID, Attempt: r.attempts + 1, Trigger: hookd.TriggerScheduled}})
				})
				if err != nil {
					t.Fatalf("write delivery %d: %v", r.seq, err)
				}
				if r.drop && be.dropJob != nil {
					be.dropJob(t, store, d.ID)
				}
			}
			if err := store.InTx(ctx, func(tx hookd.Tx) error {
				return tx.SetDeliveryStatus(ctx, id(3), hookd.DeliveryDelivered, nil, "", created)
			}); err != nil {
				t.Fatal(err)
			}

			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				c.Stop(ctx)
			})
			rig := &orderRig{ctx: ctx, client: c, store: store, app: app}
			for path, want := range map[string][]int{"/plain": {0, 1, 2}, "/stuck": {4, 5, 6}, "/live": {7, 8, 9}} {
				if got := rig.waitSettled(t, eps[path].ID); got[hookd.DeliveryDelivered] != len(want)+btoi(path == "/stuck") {
					t.Errorf("%s: deliveries by status %v, want all delivered", path, got)
				}
				var seqs []int
				for _, req := range recv.Requests(path) {
					var p struct{ Seq int }
					if err := json.Unmarshal(req.Body, &p); err != nil {
						t.Fatal(err)
					}
					seqs = append(seqs, p.Seq)
					if p.Seq == 2 && req.At.Before(later) {
						t.Errorf("delivery 2 arrived at %s, before its next attempt at %s", req.At.Format(time.StampMicro), later.Format(time.StampMicro))
					}
				}
				if path == "/plain" {
					slices.Sort(seqs)
				}
				if !slices.Equal(seqs, want) {
					t.Errorf("%s received %v, want %v (once each; in this order on an ordered endpoint)", path, seqs, want)
				}
			}
			for seq, n := range map[int]int{0: 1, 1: 2, 2: 2} {
				d, err := store.GetDelivery(ctx, id(seq))
				if err != nil {
					t.Fatal(err)
				}
				if d.Attempts != n {
					t.Errorf("delivery %d made %d attempts, want %d: its repaired job carries the next attempt", seq, d.Attempts, n)
				}
			}
			if !be.logsRepair {
				return
			}
			lines := repairedLine.FindAllStringSubmatch(log.String(), -1)
			if len(lines) != 1 || lines[0][1] != "4" {
				t.Errorf("repair lines %q, want one with deliveries=4 (0, 1, 2 and the stuck head 4); the logs:\n%s",
					lines, strings.Join(grepLines(log.String(), "hookd queue"), "\n"))
			}
		})
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// grepLines returns the lines of s that hold sub.
func grepLines(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
