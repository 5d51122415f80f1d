-- hookd schema on PostgreSQL, version 5: what an event type keeps besides its name, description
-- and schemas, as Svix does. feature_flags is the JSON list of its feature flags (NULL for none),
-- and feature_flag stays the first of them; group_name is its group ('' for none); deprecated
-- marks an event type still in use but on its way out.
ALTER TABLE hookd_event_types ADD COLUMN feature_flags jsonb;
ALTER TABLE hookd_event_types ADD COLUMN group_name text NOT NULL DEFAULT '';
ALTER TABLE hookd_event_types ADD COLUMN deprecated boolean NOT NULL DEFAULT false;
UPDATE hookd_event_types SET feature_flags = jsonb_build_array(feature_flag) WHERE feature_flag <> '';
