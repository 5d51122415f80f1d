-- hookd schema on PostgreSQL, version 2: the queue of delivery jobs, lighter than River's.
--
-- One row is one job: one attempt of one delivery, due at run_at. A process claims due jobs by
-- moving run_at to the end of a lease (the job timeout and 30 s), so a claimed job is not due for
-- any other process, and one whose process died is due again once its lease runs out. claims
-- counts the claims: an outcome is written only by the claim it belongs to. A worked job is
-- deleted; a snoozed or failed one gets a new run_at.
CREATE TABLE hookd_jobs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lane         text COLLATE "C" NOT NULL,
    run_at       timestamptz NOT NULL,
    delivery_id  text COLLATE "C" NOT NULL,
    attempt      integer NOT NULL,
    trigger_kind text NOT NULL DEFAULT '',
    not_before   timestamptz,
    claims       integer NOT NULL DEFAULT 0,
    failures     integer NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT ''
);

CREATE INDEX hookd_jobs_due ON hookd_jobs (lane, run_at, id);
