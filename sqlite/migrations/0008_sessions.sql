-- hookd schema, version 8: the browser sessions of the dashboard and the portal, by hex SHA-256 of
-- their id only. token_hash is the hash of the token signed in with (the session works only while
-- that token does); app_id is NULL for a dashboard session and names the application of a portal
-- session, which goes with its application. expires_at is indexed for the purge of expired ones.
-- IF NOT EXISTS: a schema taken back to an earlier version (as the migration tests do) applies it
-- again.
CREATE TABLE IF NOT EXISTS hookd_sessions (
    hash       TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    app_id     TEXT REFERENCES hookd_applications (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS hookd_sessions_expires_at ON hookd_sessions (expires_at);

-- Serves the cascade of an application's deletion.
CREATE INDEX IF NOT EXISTS hookd_sessions_app_id ON hookd_sessions (app_id) WHERE app_id IS NOT NULL;
