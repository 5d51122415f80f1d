-- hookd schema on PostgreSQL, version 19: autovacuum settings of the tables' own, so that a
-- server of default settings keeps them (docs/install.md). Each ALTER changes only the tables'
-- options (a SHARE UPDATE EXCLUSIVE lock, no rewrite): instant at any size.
--
-- The queue's tables, hookd_jobs, hookd_endpoint_slots and the bus's hookd_events, hold few live
-- rows (the jobs due or running, the slots leased, the events not yet dispatched) and write a
-- dead one for each job claimed, settled or deleted: thousands a minute. The default trigger,
-- 50 dead rows plus 20 % of the live ones, is right for their size, but a vacuum of such a table
-- is throttled like that of a large one (vacuum_cost_delay); here it runs unthrottled (it reads a
-- few hundred pages), and is due after 1,000 dead rows whatever the live count, so that a
-- backlog of a million jobs drained in an hour does not wait for 200,000 dead rows. Their
-- statistics are refreshed as often, since their size swings.
ALTER TABLE hookd_jobs SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000);
ALTER TABLE hookd_endpoint_slots SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000);
ALTER TABLE hookd_events SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000);

-- hookd_deliveries is large (three rows a message, kept for the retention) and each row is
-- updated a few times in its first minutes (its first job taken, its status settled): at 20 %
-- a table of 30M rows waits for 6M dead ones. At 2 % plus 10,000 a vacuum comes every 600,000
-- dead rows, which keeps the pages that the updates free (fillfactor 40, migration 14) reusable
-- and the visibility map current. The tables that the retention cleaner deletes from vacuum at
-- 5 %: a day's sweep under a retention of 30 days or more deletes at most 3 % of them, so the
-- space it frees is reused within two days rather than after 20 % of the table is dead.
ALTER TABLE hookd_deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 10000);
ALTER TABLE hookd_messages SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE hookd_attempts SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE hookd_message_channels SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE hookd_message_tags SET (autovacuum_vacuum_scale_factor = 0.05);
