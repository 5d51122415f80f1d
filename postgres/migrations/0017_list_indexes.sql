-- hookd schema on PostgreSQL, version 17: every list bounded by an index at millions of rows.
--
-- An attempt carries its message's event type, so that an endpoint's attempts of some event
-- types are ranges of hookd_attempts_endpoint_event_type, one a type, rather than every attempt
-- of the endpoint with its message read. The type leads the index, so that no plan of a list
-- without one walks it in place of (endpoint_id, id) and sorts what it finds. The rows already here keep NULL (a backfill would write
-- a new version of every row of the largest table): the lists read their messages' types,
-- through the index's range of NULLs, which shrinks to nothing as retention removes them.
ALTER TABLE hookd_attempts ADD COLUMN event_type text COLLATE "C";
CREATE INDEX hookd_attempts_endpoint_event_type ON hookd_attempts (event_type, endpoint_id, id);
-- An endpoint's failed attempts (a few in a hundred), for the lists of its failures, which name
-- the outcome as a literal: on (endpoint_id, id) alone such a list reads every attempt of a
-- healthy endpoint to fill a page.
CREATE INDEX hookd_attempts_endpoint_failed ON hookd_attempts (endpoint_id, id) WHERE NOT success;
-- An application's deliveries, for its lists (the dashboard's and the portal's application
-- pages), which otherwise walk every application's deliveries by the primary key: delivered ones
-- in one partial index, the others in another, as an endpoint's are (migration 15), so that a
-- row version has an entry in one of them. A list of every status merges the two.
CREATE INDEX hookd_deliveries_app_id_undelivered ON hookd_deliveries (app_id, status, id)
	WHERE status <> 'delivered';
CREATE INDEX hookd_deliveries_app_id_delivered ON hookd_deliveries (app_id, id)
	WHERE status = 'delivered';
