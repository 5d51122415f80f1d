// Package jobqueue is the queue engine of hookd's SQL stores: what sqlite.Queue and
// postgres.Queue do alike, written once. Each store implements a Driver over its hookd_jobs
// table (fetch a lane's due jobs, settle a batch of outcomes); an Engine runs the lanes over it.
// The stores' Queue docs say only what differs: how a fetch holds a job (SQLite's in-memory
// running set under its process lock, PostgreSQL's claims and leases) and how a lane hears of
// new jobs (a wake after the store's own commits; PostgreSQL's LISTEN/NOTIFY).
//
// # Lanes
//
// Each hookd.Lane has worker slots of its own (hookd.QueueConfig.Workers) and a fetch loop of its
// own, so a backlog of retries never delays a first attempt. A lane fetches due jobs into its
// free slots: at Start, whenever it is woken (a job enqueued in one of the store's own
// transactions wakes its lane when the transaction commits, and a finished job frees a slot),
// and at the latest every poll interval: 20 ms for first attempts, 100 ms for retries and manual
// attempts. A fetch that fills every free slot is followed by another after 2 ms, as more may be
// due. Between two fetches a lane pauses 2 ms, which bounds the fetch rate when wakes come back
// to back and lets the jobs that come due meanwhile share the next fetch.
//
// # Holding a job until due
//
// A lane fetches the jobs due within two poll intervals and holds each in its worker slot until
// its due time, so a job starts within a few milliseconds of its NotBefore, and a job enqueued
// without a wake (inside an app's transaction) within a poll interval. One run of the handler
// is bounded by the job timeout (hookd.QueueConfig.JobTimeout).
//
// # Results
//
// A handler that returns nil finishes the job; a *hookd.SnoozeError makes it due again after the
// delay, the same job, no failure counted; any other error makes it due again after 1 s, 2 s,
// 4 s ... at most 1 min (hookd.FailedJobDelay), for about a week (10,000 failures), after which
// the job is dropped with an error in the log. A job that Stop stops, before or during its run,
// is released: due again as it was, no failure counted. Outcomes are settled in batches, one
// Settle for every outcome waiting, so under load a few writes carry thousands of outcomes; a
// Settle that fails keeps its outcomes waiting, and is tried again after 100 ms.
//
// # Start and Stop
//
// Start opens the driver (SQLite takes its process lock there, and each store repairs its
// jobs: a pending delivery left without a job gets one), starts the lanes, and the
// driver's listener if it has one. Stop stops the fetches and waits for the jobs in flight until
// its context ends; jobs still running then have their contexts cancelled, and Stop waits 5 s
// more for them to return and reports an error wrapping the context's. Then it settles the
// outcomes waiting and closes the driver. Cancelling Start's context stops the run as Stop does,
// with the job timeout for the jobs in flight.
package jobqueue
