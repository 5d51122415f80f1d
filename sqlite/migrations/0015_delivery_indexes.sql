-- hookd schema, version 15: narrower delivery indexes. A send's deliveries scatter over every
-- endpoint's part of an index keyed by endpoint, so each such index costs a commit about ten
-- pages; two of them over every delivery were kept, (endpoint_id, status, id) and
-- (endpoint_id, id). One stays, (endpoint_id, id), for the lists of an endpoint's deliveries
-- (a status filter is checked row by row). What reads an endpoint's pending deliveries (an
-- ordered endpoint's head, a park, the parked deliveries, the pending summary) reads
-- hookd_deliveries_endpoint_pending, which holds only the pending deliveries: a few pages while
-- the deliveries keep up.
DROP INDEX hookd_deliveries_endpoint_id_status;
CREATE INDEX hookd_deliveries_endpoint_pending ON hookd_deliveries (endpoint_id, id) WHERE status = 'pending';
