-- hookd schema, version 2: what the HTTP server keeps.

-- The server's API tokens, by hex SHA-256 only. app_id is NULL for the admin token and names the
-- application of an app-portal token, which goes with its application. A NULL expires_at never
-- expires.
CREATE TABLE hookd_tokens (
    hash       TEXT PRIMARY KEY,
    app_id     TEXT REFERENCES hookd_applications (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER
);

-- Serves the cascade of an application's deletion.
CREATE INDEX hookd_tokens_app_id ON hookd_tokens (app_id) WHERE app_id IS NOT NULL;

-- Responses the server replays for a repeated Idempotency-Key; expires_at is indexed for the purge
-- of expired ones.
CREATE TABLE hookd_idempotency (
    key        TEXT PRIMARY KEY,
    status     INTEGER NOT NULL,
    body       BLOB,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX hookd_idempotency_expires_at ON hookd_idempotency (expires_at);
