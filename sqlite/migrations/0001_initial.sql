-- hookd schema, version 1.
--
-- Times are INTEGER Unix microseconds, UTC. JSON columns are TEXT holding a JSON array or object;
-- an empty list or map is stored as NULL. Optional strings that take part in a unique key (an
-- application's or endpoint's uid, a message's event id) are NULL when unset; other strings are
-- NOT NULL DEFAULT ''.

CREATE TABLE hookd_applications (
    id            TEXT PRIMARY KEY,
    uid           TEXT UNIQUE,
    name          TEXT NOT NULL,
    throttle_rate INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE hookd_endpoints (
    id                   TEXT PRIMARY KEY,
    app_id               TEXT NOT NULL REFERENCES hookd_applications (id) ON DELETE CASCADE,
    uid                  TEXT,
    url                  TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    version              INTEGER NOT NULL DEFAULT 0,
    event_types          TEXT,
    channels             TEXT,
    disabled             INTEGER NOT NULL DEFAULT 0,
    disabled_reason      TEXT NOT NULL DEFAULT '',
    disabled_at          INTEGER,
    rate_limit           INTEGER NOT NULL DEFAULT 0,
    max_in_flight        INTEGER NOT NULL DEFAULT 0,
    headers              TEXT,
    scheme               TEXT NOT NULL DEFAULT '',
    metadata             TEXT,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    last_attempt_at      INTEGER,
    last_status          INTEGER NOT NULL DEFAULT 0,
    last_error           TEXT NOT NULL DEFAULT '',
    last_success_at      INTEGER,
    failing_since        INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    UNIQUE (app_id, uid)
);

CREATE INDEX hookd_endpoints_app_id ON hookd_endpoints (app_id, id);

CREATE TABLE hookd_endpoint_keys (
    id          INTEGER PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES hookd_endpoints (id) ON DELETE CASCADE,
    secret      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER
);

CREATE INDEX hookd_endpoint_keys_endpoint_id ON hookd_endpoint_keys (endpoint_id, created_at);

CREATE TABLE hookd_event_types (
    name         TEXT PRIMARY KEY,
    description  TEXT NOT NULL DEFAULT '',
    schemas      TEXT,
    feature_flag TEXT NOT NULL DEFAULT '',
    archived     INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);

CREATE TABLE hookd_messages (
    id         TEXT PRIMARY KEY,
    app_id     TEXT NOT NULL REFERENCES hookd_applications (id) ON DELETE CASCADE,
    event_id   TEXT,
    event_type TEXT NOT NULL,
    channels   TEXT,
    payload    BLOB,
    created_at INTEGER NOT NULL
);

CREATE UNIQUE INDEX hookd_messages_event_id ON hookd_messages (app_id, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX hookd_messages_app_id ON hookd_messages (app_id, id);
CREATE INDEX hookd_messages_app_id_event_type ON hookd_messages (app_id, event_type, id);

-- The channels each message names (also in hookd_messages.channels), so that a list of the
-- messages on one channel walks an index instead of every message of the application.
CREATE TABLE hookd_message_channels (
    app_id     TEXT NOT NULL,
    channel    TEXT NOT NULL,
    message_id TEXT NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    PRIMARY KEY (app_id, channel, message_id)
) WITHOUT ROWID;

CREATE INDEX hookd_message_channels_message_id ON hookd_message_channels (message_id);

-- endpoint_id is not a foreign key: a delivery outlives its endpoint, for the log. The unique key
-- (message_id, endpoint_id) also serves lookups by message_id.
CREATE TABLE hookd_deliveries (
    id              TEXT PRIMARY KEY,
    message_id      TEXT NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    endpoint_id     TEXT NOT NULL,
    app_id          TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (message_id, endpoint_id)
);

CREATE INDEX hookd_deliveries_endpoint_id_status ON hookd_deliveries (endpoint_id, status, id);
CREATE INDEX hookd_deliveries_endpoint_id ON hookd_deliveries (endpoint_id, id);

-- duration is in microseconds.
CREATE TABLE hookd_attempts (
    id           TEXT PRIMARY KEY,
    delivery_id  TEXT NOT NULL,
    message_id   TEXT NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    endpoint_id  TEXT NOT NULL,
    app_id       TEXT NOT NULL,
    number       INTEGER NOT NULL,
    trigger_kind TEXT NOT NULL,
    url          TEXT NOT NULL,
    at           INTEGER NOT NULL,
    duration     INTEGER NOT NULL,
    status_code  INTEGER NOT NULL,
    success      INTEGER NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    response     TEXT NOT NULL DEFAULT ''
);

CREATE INDEX hookd_attempts_message_id ON hookd_attempts (message_id, id);
CREATE INDEX hookd_attempts_endpoint_id ON hookd_attempts (endpoint_id, id);
CREATE INDEX hookd_attempts_delivery_id ON hookd_attempts (delivery_id, number);
CREATE INDEX hookd_attempts_app_id ON hookd_attempts (app_id, id);

CREATE TABLE hookd_operational_events (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    app_id      TEXT NOT NULL DEFAULT '',
    endpoint_id TEXT NOT NULL DEFAULT '',
    message_id  TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL DEFAULT '',
    at          INTEGER NOT NULL
);
