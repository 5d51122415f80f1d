-- hookd schema, version 5: the outbox of the domain event bus (package bus).
--
-- One row is one published event, written in the app's own transaction. A pending event is due
-- at next_attempt_at (Unix microseconds); a claim adds one to attempts, if attempts is still what
-- the claimer read, and moves next_attempt_at past the handlers' run, so that one attempt is
-- dispatched once whatever the number of processes. A dispatched event is deleted; one that failed
-- every attempt stays, status 'failed', until it is re-driven.
CREATE TABLE hookd_events (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    aggregate_id    TEXT NOT NULL DEFAULT '',
    payload         BLOB NOT NULL,
    occurred_at     INTEGER NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE INDEX hookd_events_due ON hookd_events (status, next_attempt_at, id);
