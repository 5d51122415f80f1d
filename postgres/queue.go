package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobqueue"
)

// Queue is the store's own hookd.Queue: jobs are rows in the store's database, written in the
// transaction that writes the deliveries they carry. Any number of processes may work one
// database's jobs. Its lanes, polls, snoozes, failures and stop are the SQL stores' queue
// engine's, described in the package documentation of internal/jobqueue; what is PostgreSQL's
// own follows.
//
// # A delivery is its own first job
//
// Most deliveries need one attempt, so the first attempt has no row of its own: the delivery row
// is the job while its first_job column is true, which a new delivery is by default (migration
// 14). EnqueueTx inserts no row for a first scheduled attempt due at once whose delivery is
// pending and its own first job, as the delivery that Send inserts in the same transaction is.
// Every other job is a row of hookd_jobs: a retry, a manual attempt, a first attempt with a
// NotBefore (which clears first_job, so that the attempt has one job), an unparked or recovered
// delivery's attempt. The delivery's own job ends with the writes that end its first attempt,
// in their own statements: the attempt's record (a scheduled one; a manual attempt leaves it),
// a status change (cancelled; the ordered endpoints' advance and unpark, which queue a job row),
// a park. A snoozed or failed own job moves to hookd_jobs, as the same job with its failures, so
// that the claims never walk over deliveries that wait; one given back by Stop stays.
//
// # Claims and leases
//
// A lane claims due jobs in one statement (FOR UPDATE SKIP LOCKED, so processes never wait on
// each other) by moving their due time to the end of a lease, the job timeout and 30 s: a
// claimed job is due for nobody else, and the job of a process that died is due again when its
// lease runs out. The first lane claims its rows of hookd_jobs first, then the deliveries that
// are their own first job (the partial index hookd_deliveries_first_job, in id order) into the
// slots left: their due time (job_due) and claim count (job_claims) are in no index, so that a
// claim is a HOT update, which the room left on each page (fillfactor 50) makes possible. A lane
// looks ahead at most half a lease. A worked job's row is deleted; a snoozed or failed one gets
// its new run_at; a job stopped by Stop is given back, due at once (or at its due time, when it
// was stopped before it). These outcomes are written in batches (one statement for every outcome
// waiting), each only if the job's claim is still the one that ran it; for a delivery's own job,
// only on the row version its claim left, since any later version was written by what ended it.
//
// # Notifications
//
// A job due soon is announced on a channel of the schema, which every process of the database
// listens to: after the commit of the store's own transactions (InTx), which also wake this
// process's lanes directly, by a notification of its own; inside an app's transaction (WrapTx),
// by pg_notify in it, delivered at its commit. A notifying transaction holds PostgreSQL's
// notification lock through its commit's WAL flush, so notifications are kept out of the store's
// own transactions: there they would make concurrent sends wait on each other's flushes.
// Notifications after commit are coalesced: one statement for the lanes waiting, while the last
// is still on its way. The lanes' polls catch what a notification missed.
type Queue struct {
	s        *Store
	logger   *slog.Logger
	channel  string // the NOTIFY channel of the schema
	driver   *claimsDriver
	engine   *jobqueue.Engine[claimRef]
	notifier notifier
}

var _ hookd.Queue = (*Queue)(nil)

// Queue settings of PostgreSQL's own. See the type's documentation.
const (
	// leaseGrace is added to the job timeout to make a claim's lease.
	leaseGrace = 30 * time.Second
	// listenRetry is the wait before the listener connects again after it lost its connection.
	listenRetry = time.Second
	// maxClaim bounds the jobs one claim takes.
	maxClaim = 1000
)

// NewQueue returns the store's queue, sized by cfg (nil: defaults). EnqueueTx works at once; jobs
// are worked after Start.
func (s *Store) NewQueue(cfg *hookd.QueueConfig) (hookd.Queue, error) {
	workers, timeout, err := cfg.Resolve()
	if err != nil {
		return nil, fmt.Errorf("postgres queue: %w", err)
	}
	channel := notifyChannel(s.schema)
	d := &claimsDriver{s: s, logger: s.logger, lease: timeout + leaseGrace, channel: channel}
	q := &Queue{s: s, logger: s.logger, channel: channel, driver: d,
		engine: jobqueue.New(d, jobqueue.Config{Name: "postgres queue", Logger: s.logger, Workers: workers, JobTimeout: timeout, MaxFetch: maxClaim})}
	q.notifier = notifier{q: q}
	return q, nil
}

// notifyChannel names the channel the queue of schema notifies: a hash of the schema's name, so
// that installations in different schemas of one database wake only their own workers.
func notifyChannel(schema string) string {
	h := fnv.New64a()
	h.Write([]byte("hookd jobs\x00" + schema))
	return "hookd_jobs_" + strconv.FormatUint(h.Sum64(), 36)
}

func invalid(field, reason string) error {
	return fmt.Errorf("postgres queue: %w", &hookd.ValidationError{Field: field, Reason: reason})
}

// insertJobsSQL inserts the jobs, but not a delivery's first scheduled attempt due at once (own)
// while the delivery row is its own first job: that row is the job. A first attempt with a
// NotBefore is a row of hookd_jobs, and its delivery's first_job is cleared (disown), so that
// the attempt has one job. Each delivery is looked up on its own (LATERAL ... LIMIT 1, an index
// lookup per job whatever the planner believes of the table; see loadWorkBatchSQL).
const insertJobsSQL = `WITH jobs AS (
	INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
	SELECT v.lane, v.run_at, v.delivery_id, v.attempt, v.trigger_kind, v.not_before
	FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::integer[], $5::text[], $6::timestamptz[], $7::boolean[])
		AS v (lane, run_at, delivery_id, attempt, trigger_kind, not_before, own)
	LEFT JOIN LATERAL (
		SELECT true AS owned FROM hookd_deliveries AS d
		WHERE v.own AND d.id = v.delivery_id AND d.first_job AND d.status = 'pending' LIMIT 1
	) AS o ON true
	WHERE o.owned IS NULL
),
disowned AS (
	UPDATE hookd_deliveries AS d SET first_job = false FROM unnest($8::text[]) AS u (id)
	WHERE d.id = ANY (ARRAY[u.id]) AND d.first_job
)
SELECT pg_notify($9, lane) FROM unnest($10::text[]) AS lanes (lane)`

// EnqueueTx inserts jobs in tx: a transaction of the store's InTx, one of WrapTx, or any
// hookd.Tx whose Raw is a pgx.Tx or a *sql.Tx of pgx's database/sql driver on the store's
// database; any other gives an error wrapping hookd.ErrUnsupportedTx. A delivery's first
// scheduled attempt due at once inserts no row while the delivery is its own first job (see the
// type's documentation), which a delivery inserted in tx is.
func (q *Queue) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	c := txConn(tx)
	if c == nil {
		return fmt.Errorf("postgres queue: enqueue: transaction is %T, want one whose Raw is a pgx.Tx or a *sql.Tx: %w", tx, hookd.ErrUnsupportedTx)
	}
	now := time.Now()
	n := len(jobs)
	var (
		lanes, deliveryIDs, triggers = make([]string, n), make([]string, n), make([]string, n)
		runAts                       = make([]time.Time, n)
		attempts                     = make([]int32, n)
		notBefores                   = make([]*time.Time, n)
		own                          = make([]bool, n)
		disown, notify               []string
		woken                        [3]bool
	)
	for i, j := range jobs {
		if j.DeliveryID == "" {
			return fmt.Errorf("postgres queue: enqueue: job %d: %w", i, &hookd.ValidationError{Field: "DeliveryID", Reason: "is empty"})
		}
		l := j.Lane()
		runAt := now
		first := j.Attempt == 1 && j.Trigger == hookd.TriggerScheduled
		if !j.NotBefore.IsZero() {
			nb := j.NotBefore
			notBefores[i] = &nb
			runAt = maxTime(now, nb)
			if first {
				disown = append(disown, j.DeliveryID)
			}
		}
		own[i] = first && j.NotBefore.IsZero()
		lanes[i], runAts[i], deliveryIDs[i], attempts[i], triggers[i] = string(l), runAt, j.DeliveryID, int32(j.Attempt), string(j.Trigger)
		if k := jobqueue.LaneIndex(l); !woken[k] && runAt.Before(now.Add(q.engine.Horizon(l))) {
			woken[k] = true
			if t, ok := tx.(*txn); ok && t.AfterCommit(func() { q.engine.Wake(l); q.notifier.announce(k) }) {
				continue
			}
			notify = append(notify, string(l))
		}
	}
	if _, err := c.exec(ctx, insertJobsSQL, lanes, runAts, deliveryIDs, attempts, triggers, notBefores, own, disown, q.channel, notify); err != nil {
		return fmt.Errorf("postgres queue: enqueue %d jobs: %w", n, err)
	}
	return nil
}

// notifier announces new jobs on the schema's channel after their transactions commit, one
// statement at a time for every lane announced meanwhile. It works whether the queue runs or not:
// a process that only serves the API announces the jobs it writes to the workers of others.
type notifier struct {
	q       *Queue
	mu      sync.Mutex
	pending [3]bool // by jobqueue.LaneIndex
	sending bool
}

// announce asks for a notification of the lane with index k.
func (n *notifier) announce(k int) {
	n.mu.Lock()
	n.pending[k] = true
	if n.sending {
		n.mu.Unlock()
		return
	}
	n.sending = true
	n.mu.Unlock()
	go n.send()
}

// send notifies the pending lanes until none is left.
func (n *notifier) send() {
	for {
		n.mu.Lock()
		var lanes []string
		for k, p := range n.pending {
			if p {
				lanes = append(lanes, string(jobqueue.Lanes[k]))
			}
		}
		n.pending = [3]bool{}
		if len(lanes) == 0 {
			n.sending = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		_, err := n.q.s.asyncPool.Exec(ctx, `SELECT pg_notify($1, lane) FROM unnest($2::text[]) AS lanes (lane)`, n.q.channel, lanes)
		cancel()
		if err != nil {
			// The other processes find the jobs at their next poll.
			n.q.logger.LogAttrs(context.Background(), slog.LevelWarn, "hookd queue: announcing new jobs failed", slog.String("error", err.Error()))
		}
	}
}

// notifyTimeout bounds one notification.
const notifyTimeout = 5 * time.Second

// txConn returns the connection tx runs on, or nil when it is none of the store's kinds.
func txConn(tx hookd.Tx) conn {
	if t, ok := tx.(*txn); ok {
		if t == nil {
			return nil
		}
		return t.c
	}
	if tx == nil {
		return nil
	}
	switch raw := tx.Raw().(type) {
	case pgx.Tx:
		if raw != nil {
			return pgxConn{raw}
		}
	case *sql.Tx:
		if raw != nil {
			return sqlConn{raw}
		}
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Start begins working jobs with h and returns. Before the first claim it repairs the schema's
// jobs, once across processes that start at once (queue_repair.go): hookd's jobs left in River's
// table move to hookd_jobs, and every pending delivery left without a job gets one, which it logs
// at Warn; an error there is Start's. Cancelling ctx stops the queue as Stop does, with running
// jobs given up to the job timeout to finish.
func (q *Queue) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil {
		return invalid("handler", "is nil")
	}
	return q.engine.Start(ctx, h)
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends. Jobs still running
// then have their contexts cancelled; Stop waits up to 5 s more for them to return (a job that
// returns after its context was cancelled is given back, due at once, without a failure counted)
// and returns an error wrapping ctx's. The outcomes of the jobs that returned are written before
// Stop returns.
func (q *Queue) Stop(ctx context.Context) error { return q.engine.Stop(ctx) }
