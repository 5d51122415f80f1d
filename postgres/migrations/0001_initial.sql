-- hookd schema on PostgreSQL, version 1.
--
-- Times are timestamptz (microseconds). Lists and maps (an endpoint's event types, channels,
-- headers, metadata; a message's channels; an application's metadata) are jsonb holding a JSON
-- array or object, and an empty one is NULL. An event type's schemas are json, which keeps the
-- text byte for byte. Payloads, stored response bodies and the responses attempts captured are
-- bytea, byte for byte (text holds neither NUL nor invalid UTF-8). Optional
-- strings that take part in a unique key (an application's or endpoint's uid, a message's event
-- id) are NULL when unset; other strings are NOT NULL DEFAULT ''.
--
-- Ids and the other keys lists page by are COLLATE "C": bytewise order, which is the order
-- hookd's ids are made in, whatever the database's default collation.

CREATE TABLE hookd_applications (
    id            text COLLATE "C" PRIMARY KEY,
    uid           text COLLATE "C" UNIQUE,
    name          text NOT NULL,
    throttle_rate integer NOT NULL DEFAULT 0,
    metadata      jsonb,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE hookd_endpoints (
    id                   text COLLATE "C" PRIMARY KEY,
    app_id               text COLLATE "C" NOT NULL REFERENCES hookd_applications (id) ON DELETE CASCADE,
    uid                  text COLLATE "C",
    url                  text NOT NULL,
    description          text NOT NULL DEFAULT '',
    version              integer NOT NULL DEFAULT 0,
    event_types          jsonb,
    channels             jsonb,
    disabled             boolean NOT NULL DEFAULT false,
    disabled_reason      text NOT NULL DEFAULT '',
    disabled_at          timestamptz,
    rate_limit           integer NOT NULL DEFAULT 0,
    max_in_flight        integer NOT NULL DEFAULT 0,
    headers              jsonb,
    scheme               text NOT NULL DEFAULT '',
    metadata             jsonb,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    last_attempt_at      timestamptz,
    last_status          integer NOT NULL DEFAULT 0,
    last_error           text NOT NULL DEFAULT '',
    last_success_at      timestamptz,
    failing_since        timestamptz,
    consecutive_failures integer NOT NULL DEFAULT 0,
    UNIQUE (app_id, uid)
);

CREATE INDEX hookd_endpoints_app_id ON hookd_endpoints (app_id, id);

CREATE TABLE hookd_endpoint_keys (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id text COLLATE "C" NOT NULL REFERENCES hookd_endpoints (id) ON DELETE CASCADE,
    secret      text NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz
);

CREATE INDEX hookd_endpoint_keys_endpoint_id ON hookd_endpoint_keys (endpoint_id, created_at);

CREATE TABLE hookd_event_types (
    name         text COLLATE "C" PRIMARY KEY,
    description  text NOT NULL DEFAULT '',
    schemas      json,
    feature_flag text NOT NULL DEFAULT '',
    archived     boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);

CREATE TABLE hookd_messages (
    id         text COLLATE "C" PRIMARY KEY,
    app_id     text COLLATE "C" NOT NULL REFERENCES hookd_applications (id) ON DELETE CASCADE,
    event_id   text COLLATE "C",
    event_type text COLLATE "C" NOT NULL,
    channels   jsonb,
    payload    bytea,
    created_at timestamptz NOT NULL
);

CREATE UNIQUE INDEX hookd_messages_event_id ON hookd_messages (app_id, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX hookd_messages_app_id ON hookd_messages (app_id, id);
CREATE INDEX hookd_messages_app_id_event_type ON hookd_messages (app_id, event_type, id);

-- The channels each message names (also in hookd_messages.channels), so that a list of the
-- messages on one channel walks an index instead of every message of the application.
CREATE TABLE hookd_message_channels (
    app_id     text COLLATE "C" NOT NULL,
    channel    text COLLATE "C" NOT NULL,
    message_id text COLLATE "C" NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    PRIMARY KEY (app_id, channel, message_id)
);

CREATE INDEX hookd_message_channels_message_id ON hookd_message_channels (message_id);

-- endpoint_id is not a foreign key: a delivery outlives its endpoint, for the log. The unique key
-- (message_id, endpoint_id) also serves lookups by message_id.
CREATE TABLE hookd_deliveries (
    id              text COLLATE "C" PRIMARY KEY,
    message_id      text COLLATE "C" NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    endpoint_id     text COLLATE "C" NOT NULL,
    app_id          text COLLATE "C" NOT NULL,
    status          text NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_error      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (message_id, endpoint_id)
);

CREATE INDEX hookd_deliveries_endpoint_id_status ON hookd_deliveries (endpoint_id, status, id);
CREATE INDEX hookd_deliveries_endpoint_id ON hookd_deliveries (endpoint_id, id);
-- The pending deliveries in id order: the sweeper of a queue outside the database walks it
-- (DueDeliveries), and PendingSummary reads only these rows. Queries must name the status as
-- the literal 'pending' for the planner to use it.
CREATE INDEX hookd_deliveries_pending ON hookd_deliveries (id) WHERE status = 'pending';

CREATE TABLE hookd_attempts (
    id           text COLLATE "C" PRIMARY KEY,
    delivery_id  text COLLATE "C" NOT NULL,
    message_id   text COLLATE "C" NOT NULL REFERENCES hookd_messages (id) ON DELETE CASCADE,
    endpoint_id  text COLLATE "C" NOT NULL,
    app_id       text COLLATE "C" NOT NULL,
    number       integer NOT NULL,
    trigger_kind text NOT NULL,
    url          text NOT NULL,
    at           timestamptz NOT NULL,
    duration_us  bigint NOT NULL,
    status_code  integer NOT NULL,
    success      boolean NOT NULL,
    error        text NOT NULL DEFAULT '',
    response     bytea NOT NULL DEFAULT ''
);

CREATE INDEX hookd_attempts_message_id ON hookd_attempts (message_id, id);
CREATE INDEX hookd_attempts_endpoint_id ON hookd_attempts (endpoint_id, id);
CREATE INDEX hookd_attempts_delivery_id ON hookd_attempts (delivery_id, number);
CREATE INDEX hookd_attempts_app_id ON hookd_attempts (app_id, id);

CREATE TABLE hookd_operational_events (
    id          text COLLATE "C" PRIMARY KEY,
    type        text NOT NULL,
    app_id      text NOT NULL DEFAULT '',
    endpoint_id text NOT NULL DEFAULT '',
    message_id  text NOT NULL DEFAULT '',
    reason      text NOT NULL DEFAULT '',
    at          timestamptz NOT NULL
);

-- The server's API tokens, by hex SHA-256 only. app_id is NULL for the admin token and names the
-- application of an app-portal token, which goes with its application. A NULL expires_at never
-- expires.
CREATE TABLE hookd_tokens (
    hash       text COLLATE "C" PRIMARY KEY,
    app_id     text COLLATE "C" REFERENCES hookd_applications (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz
);

-- Serves the cascade of an application's deletion.
CREATE INDEX hookd_tokens_app_id ON hookd_tokens (app_id) WHERE app_id IS NOT NULL;

-- Responses the server replays for a repeated Idempotency-Key; expires_at is indexed for the purge
-- of expired ones.
CREATE TABLE hookd_idempotency (
    key        text COLLATE "C" PRIMARY KEY,
    status     integer NOT NULL,
    body       bytea,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX hookd_idempotency_expires_at ON hookd_idempotency (expires_at);
