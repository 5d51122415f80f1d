-- hookd schema, version 13: an endpoint's and an application's own retry policy. retry_schedule
-- is the waits in milliseconds apart by commas ('' for no retries), timeout_ms the attempt
-- timeout; NULL inherits (the endpoint's from its application, the application's from the server).
ALTER TABLE hookd_endpoints ADD COLUMN retry_schedule TEXT;
ALTER TABLE hookd_endpoints ADD COLUMN timeout_ms INTEGER;
ALTER TABLE hookd_applications ADD COLUMN retry_schedule TEXT;
ALTER TABLE hookd_applications ADD COLUMN timeout_ms INTEGER;
