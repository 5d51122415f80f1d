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
-- few attempts for each endpoint.
-- delivery_id is no foreign key, so no cascade needs it. The other indexes stay:
-- message_id (the lists by message, the foreign key's cascade, retention's count), endpoint_id
-- (the lists and stats by endpoint) and app_id (the application's chart, AttemptsPerHour with
-- no endpoint, and the library's list of an application's attempts, which would otherwise read
-- every application's attempts).
DROP INDEX hookd_attempts_delivery_id;

-- hookd_deliveries_endpoint_id_status (endpoint_id, status, id) becomes partial: a delivered
-- delivery leaves it. A delivery is delivered in the common case, so the record of its success
-- writes no entry there (nor in the pending and first_job indexes). Its readers name their
-- status as a literal, which the planner matches against the predicate: an ordered endpoint's
-- head (FirstPendingDelivery) and its parked deliveries (pending), recovery of the failed
-- ones, and the endpoint's lists with a status other than delivered. An endpoint's delivered
-- deliveries, most of its rows, are listed through hookd_deliveries_endpoint_id (endpoint_id,
-- id), filtered by status. That index and the unique (message_id, endpoint_id) stay: the lists
-- by endpoint, and by message (the cascade, retention, the destinations).
DROP INDEX hookd_deliveries_endpoint_id_status;
CREATE INDEX hookd_deliveries_endpoint_id_undelivered ON hookd_deliveries (endpoint_id, status, id)
	WHERE status <> 'delivered';

-- The room a page of deliveries keeps for the row versions of claims and records: half of it
-- (fillfactor 50, which migration 14's figures were measured with; it set 40). Per delivery of
-- BenchmarkDeliveryRows (2000x, on a server of its own) with this migration's indexes,
-- fillfactor 40 took 527-540 bytes of heap at 49.8-49.9 % HOT updates, 50 took 448-469 bytes at
-- 49.6-49.7 % with the same WAL (20.0-20.5 records), and 60 took 399 bytes but 40.6 % HOT and
-- 21.8 WAL records. Pages already written keep their layout.
ALTER TABLE hookd_deliveries SET (fillfactor = 50);
