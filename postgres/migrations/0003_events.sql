-- hookd schema on PostgreSQL, version 3: the outbox of the domain event bus (package bus).
--
-- One row is one published event, written in the app's own transaction. A pending event is due
-- at next_attempt_at; a claim adds one to attempts, if attempts is still what the claimer read,
-- and moves next_attempt_at past the handlers' run, so that one attempt is dispatched once
-- whatever the number of processes. A dispatched event is deleted; one that failed every attempt
-- stays, status 'failed', until it is re-driven. The payload is kept byte for byte.
CREATE TABLE hookd_events (
    id              text COLLATE "C" PRIMARY KEY,
    name            text NOT NULL,
    aggregate_id    text NOT NULL DEFAULT '',
    payload         bytea NOT NULL,
    occurred_at     timestamptz NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX hookd_events_due ON hookd_events (status, next_attempt_at, id);
