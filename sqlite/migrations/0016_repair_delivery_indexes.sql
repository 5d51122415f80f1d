-- hookd schema, version 16: a repair. A database migrated by a build of the time when migration
-- 15 lacked them has no hookd_deliveries_endpoint_failed or hookd_deliveries_endpoint_cancelled
-- (migration 15 records them since); this creates them where they are missing, and changes
-- nothing where they exist.
CREATE INDEX IF NOT EXISTS hookd_deliveries_endpoint_failed ON hookd_deliveries (endpoint_id, id) WHERE status = 'failed';
CREATE INDEX IF NOT EXISTS hookd_deliveries_endpoint_cancelled ON hookd_deliveries (endpoint_id, id) WHERE status = 'cancelled';
