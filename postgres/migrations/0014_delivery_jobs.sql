-- hookd schema, version 14: a delivery row is its own first job (the queue's documentation in
-- postgres/queue.go has the design). first_job is true while the delivery's first scheduled
-- attempt is a job of the delivery row itself rather than a row of hookd_jobs: every delivery
-- inserted from now on has it by default (deliveries already here keep their jobs in hookd_jobs:
-- false), and whatever writes the delivery's state (an attempt's record, a status change, a park)
-- clears it, as does the queue when that job ends or moves to hookd_jobs (a snooze, a failure).
-- job_due is when the job is due: NULL for at once, else the end of a claim's lease or the due
-- time it was given back with; job_claims counts its claims, so that an outcome is written only
-- while the claim that ran it holds. Neither is indexed, so that a claim is a HOT update; the
-- room left on each page (fillfactor) is for the row versions of claims.
ALTER TABLE hookd_deliveries ADD COLUMN first_job boolean NOT NULL DEFAULT false,
	ADD COLUMN job_due timestamptz, ADD COLUMN job_claims integer NOT NULL DEFAULT 0;
ALTER TABLE hookd_deliveries ALTER COLUMN first_job SET DEFAULT true;
ALTER TABLE hookd_deliveries SET (fillfactor = 40);
-- The due first jobs, oldest first: what a claim of the first lane walks.
CREATE INDEX hookd_deliveries_first_job ON hookd_deliveries (id) WHERE first_job AND status = 'pending';
