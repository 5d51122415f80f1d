-- hookd schema, version 15: fewer index entries for an attempt's record. Recording an attempt
-- inserts its row into hookd_attempts (one entry in each of that table's indexes) and updates
-- its delivery. That update cannot be HOT: the first attempt's record clears first_job and a
-- delivery that ends changes its status, and both columns are in the predicates of the pending
-- and first_job indexes, which the queue and the sweeper walk. So the new row version gets an
-- entry in every index whose predicate it meets. This migration drops the entries that a
-- cheaper index serves.
--
-- hookd_attempts_delivery_id (delivery_id, number) goes. Its one reader was a list of a
-- delivery's attempts (hookd.AttemptFilter.DeliveryID); a delivery is one (message, endpoint)
-- pair, so the store reads the delivery's message first and lists the message's attempts
-- through hookd_attempts_message_id (message_id, id), filtered by delivery_id: a message has a
-- few attempts for each endpoint. delivery_id is no foreign key, so no cascade needs it. The
-- other indexes stay: message_id (the lists by message, the foreign key's cascade, retention's
-- count), endpoint_id (the lists and stats by endpoint) and app_id (the application's chart,
-- AttemptsPerHour with no endpoint, and the library's list of an application's attempts, which
-- would otherwise read every application's attempts).
DROP INDEX hookd_attempts_delivery_id;

-- An endpoint's deliveries were in two indexes, (endpoint_id, id) and (endpoint_id, status,
-- id), each with an entry for every row version. Now they are in two partial indexes that split
-- them: hookd_deliveries_endpoint_id_undelivered, (endpoint_id, status, id) WHERE status <>
-- 'delivered', and hookd_deliveries_endpoint_id_delivered, (endpoint_id, id) WHERE status =
-- 'delivered'. A delivery's row gets one entry in one of them when it is inserted (pending) and
-- one when its record ends it, where there were two and one. Their readers name the status as
-- a literal, which the planner matches against the predicates: an ordered endpoint's head
-- (FirstPendingDelivery), its parked deliveries and a park's check (pending), recovery of the
-- failed ones, and the endpoint's lists by status. An endpoint's list of every status is one
-- branch a status, each an index range in id order, merged (Merge Append) to a page. The
-- unique (message_id, endpoint_id) stays: the lists by message (the foreign key's cascade,
-- retention, the destinations, a message's delivery to an endpoint).
DROP INDEX hookd_deliveries_endpoint_id_status, hookd_deliveries_endpoint_id;
CREATE INDEX hookd_deliveries_endpoint_id_undelivered ON hookd_deliveries (endpoint_id, status, id)
	WHERE status <> 'delivered';
CREATE INDEX hookd_deliveries_endpoint_id_delivered ON hookd_deliveries (endpoint_id, id)
	WHERE status = 'delivered';

-- The room a page of deliveries keeps for the row versions of claims and records: half of it
-- (fillfactor 50, which migration 14's figures were measured with; it set 40). Per delivery of
-- BenchmarkDeliveryRows (2000x, on a server of its own) with this migration's indexes,
-- fillfactor 40 took 527 bytes of heap, 0.274 blocks dirtied and 49.9 % HOT updates; 50 took
-- 431-445 bytes, 0.263-0.264 blocks and 49.7 %, with the same WAL (19.1-19.2 records). 60 took
-- 399 bytes but 40.6 % HOT and 1.7 more WAL records than 40 and 50 (measured with the whole
-- (endpoint_id, id) index still in place). Pages already written keep their layout.
ALTER TABLE hookd_deliveries SET (fillfactor = 50);
