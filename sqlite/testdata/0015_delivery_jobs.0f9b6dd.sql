-- hookd schema, version 15: narrower delivery indexes, and a delivery its own first job. A send's deliveries scatter over every
-- endpoint's part of an index keyed by endpoint, so each such index costs a commit about ten
-- pages; two of them over every delivery were kept, (endpoint_id, status, id) and
-- (endpoint_id, id). One stays, (endpoint_id, id), for the lists of an endpoint's deliveries
-- (a status filter is checked row by row). What reads an endpoint's pending deliveries (an
-- ordered endpoint's head, a park, the parked deliveries, the pending summary) reads
-- hookd_deliveries_endpoint_pending, which holds only the pending deliveries: a few pages while
-- the deliveries keep up.
DROP INDEX hookd_deliveries_endpoint_id_status;
CREATE INDEX hookd_deliveries_endpoint_pending ON hookd_deliveries (endpoint_id, id) WHERE status = 'pending';
-- A delivery row is its own first job (the queue's documentation in sqlite/queue.go has the
-- design): first_job is 1 while the delivery's first scheduled attempt is a job of the delivery
-- row itself rather than a row of hookd_jobs. InsertDeliveries writes 1 (deliveries already here
-- keep their jobs in hookd_jobs: 0), and whatever writes the delivery's state (an attempt's
-- record, a status change, a park) clears it, as does the queue when that job ends or moves to
-- hookd_jobs (a snooze, a failure). The due first jobs, oldest first, are what the first lane
-- reads besides its rows of hookd_jobs.
ALTER TABLE hookd_deliveries ADD COLUMN first_job INTEGER NOT NULL DEFAULT 0;
CREATE INDEX hookd_deliveries_first_job ON hookd_deliveries (id) WHERE first_job AND status = 'pending';
