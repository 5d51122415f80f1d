-- hookd schema, version 7: what an event type keeps besides its name, description and schemas,
-- as Svix does. feature_flags is the JSON list of its feature flags (NULL for none), and
-- feature_flag stays the first of them; group_name is its group ('' for none); deprecated marks
-- an event type still in use but on its way out.
ALTER TABLE hookd_event_types ADD COLUMN feature_flags TEXT;
ALTER TABLE hookd_event_types ADD COLUMN group_name TEXT NOT NULL DEFAULT '';
ALTER TABLE hookd_event_types ADD COLUMN deprecated INTEGER NOT NULL DEFAULT 0;
UPDATE hookd_event_types SET feature_flags = json_array(feature_flag) WHERE feature_flag <> '';
