package jobqueue

import (
	"context"
	"time"

	"github.com/hookd/hookd"
)

// Driver is a store's jobs table as the engine uses it. R is the store's reference to one fetched
// job: what its Settle needs to write that job's outcome (a row id; a claim).
type Driver[R any] interface {
	// Open begins a run, before any Fetch: it takes what one run holds (a process lock),
	// forgets what a previous run left (every job in the table is due to this one), and
	// repairs the table, so that every delivery that waits for an attempt has a job. ctx is
	// Start's. An error is what Start returns, with nothing held.
	Open(ctx context.Context) error
	// Fetch returns up to limit jobs of lane due by horizon, oldest first, each held for this
	// run until its outcome is settled. The engine calls one Fetch of a lane at a time.
	Fetch(ctx context.Context, lane hookd.Lane, limit int, horizon time.Time) ([]Job[R], error)
	// Settle writes a batch of outcomes, all or none: an error keeps the whole batch waiting,
	// and it is tried again.
	Settle(ctx context.Context, batch []Outcome[R]) error
	// Close ends a run, after its last Settle: it gives back what Open took.
	Close() error
}

// Listener is a Driver that hears of jobs other processes enqueue (PostgreSQL's LISTEN).
type Listener interface {
	// Listen calls wake with the lane of each job announced, until ctx ends. The engine runs it
	// beside the lanes, from Start until Stop.
	Listen(ctx context.Context, wake func(hookd.Lane))
}

// Job is a fetched job.
type Job[R any] struct {
	hookd.Job
	// RunAt is when the job is due: the engine holds it until then.
	RunAt time.Time
	// Failures counts the handler's failures so far (never a snooze).
	Failures int
	// Ref is the driver's reference to the job, handed back in its Outcome.
	Ref R
}

// Result is what became of a job.
type Result int

const (
	// Done: the job is finished (worked, or dropped after too many failures); its row goes.
	Done Result = iota
	// Again: the job is due again at RunAt (a snooze, or a failure counted in Failures).
	Again
	// Released: Stop stopped the job before or during its run; it is due again at RunAt
	// as it was, no failure counted. A driver whose unsettled jobs are due anyway may write
	// nothing for it.
	Released
)

// Outcome is what became of one job, for the driver's Settle.
type Outcome[R any] struct {
	Lane   hookd.Lane
	Ref    R
	Result Result
	// RunAt, Failures and LastError are the job's new run_at, failures and last_error, for
	// Again and Released.
	RunAt     time.Time
	Failures  int
	LastError string
}
