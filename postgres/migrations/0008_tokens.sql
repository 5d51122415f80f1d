-- hookd schema on PostgreSQL, version 8: what an app-portal token may do besides reading its
-- application. read_only refuses every write and the endpoint secrets; feature_flags is the JSON
-- list of the feature flags it holds (NULL for none), which show it the event types gated by them.
ALTER TABLE hookd_tokens ADD COLUMN read_only boolean NOT NULL DEFAULT false;
ALTER TABLE hookd_tokens ADD COLUMN feature_flags jsonb;
