-- hookd schema, version 3: the queue of delivery jobs, in place of River's tables.
--
-- One row is one job: one attempt of one delivery, due at run_at (Unix microseconds). A worked
-- job is deleted; a snoozed or failed one gets a later run_at. Which jobs are running is kept in
-- the memory of the one process that has the file open (the store's process lock), so a crash
-- leaves every job due again for the next process, and fetching never writes.
CREATE TABLE hookd_jobs (
    id           INTEGER PRIMARY KEY,
    lane         TEXT NOT NULL,
    run_at       INTEGER NOT NULL,
    delivery_id  TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    trigger_kind TEXT NOT NULL DEFAULT '',
    not_before   INTEGER,
    failures     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT ''
);

CREATE INDEX hookd_jobs_due ON hookd_jobs (lane, run_at, id);
