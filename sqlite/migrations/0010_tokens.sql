-- hookd schema, version 10: what an app-portal token may do besides reading its application.
-- read_only refuses every write and the endpoint secrets; feature_flags is the JSON list of the
-- feature flags it holds (NULL for none), which show it the event types gated by them.
ALTER TABLE hookd_tokens ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE hookd_tokens ADD COLUMN feature_flags TEXT;
