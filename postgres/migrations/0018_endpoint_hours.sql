-- hookd schema, version 18: each endpoint's attempts counted by the hour they were made in, kept
-- as attempts are recorded (in the record's transaction), so that the endpoint stats (28 days),
-- the health figures and the charts read a row an hour instead of every attempt: whole hours
-- from here, the partial hour at either end of a window from hookd_attempts.
--
-- hour is the UTC hour since the Unix epoch (floor(epoch seconds / 3600)). min_id and max_id
-- are the least and greatest id of the hour's attempts: a partial hour's attempts are read by
-- walking hookd_attempts_endpoint_id (endpoint_id, id) between them. An application's deletion
-- deletes its rows (as its messages' attempts go); an endpoint's leaves them, as it leaves its
-- attempts, which still count in the application's chart. Retention deletes the hours it has
-- passed, through hookd_endpoint_hours_hour. A batch of records updates a row once; none of the
-- updated columns is indexed, so with room on the page (fillfactor) the update is HOT.
CREATE TABLE hookd_endpoint_hours (
    endpoint_id text COLLATE "C" NOT NULL,
    hour        bigint NOT NULL,
    app_id      text COLLATE "C" NOT NULL,
    succeeded   bigint NOT NULL,
    failed      bigint NOT NULL,
    min_id      text COLLATE "C" NOT NULL,
    max_id      text COLLATE "C" NOT NULL
) WITH (fillfactor = 70);
-- The attempts recorded before this version, counted once: one read of hookd_attempts, grouped
-- in memory (a hash of a few hundred bytes a group: 250k groups at 1M messages; with the default
-- work_mem the hash spilled to disk and took 1.6 times as long), then the keys and indexes,
-- built once each rather than row by row.
SET LOCAL work_mem = '256MB';
INSERT INTO hookd_endpoint_hours (endpoint_id, hour, app_id, succeeded, failed, min_id, max_id)
    SELECT endpoint_id, floor(extract(epoch FROM at) / 3600)::bigint, min(app_id),
        count(*) FILTER (WHERE success), count(*) FILTER (WHERE NOT success), min(id), max(id)
    FROM hookd_attempts GROUP BY 1, 2;
RESET work_mem;
ALTER TABLE hookd_endpoint_hours ADD PRIMARY KEY (endpoint_id, hour),
    ADD FOREIGN KEY (app_id) REFERENCES hookd_applications (id) ON DELETE CASCADE;
CREATE INDEX hookd_endpoint_hours_app ON hookd_endpoint_hours (app_id, hour);
CREATE INDEX hookd_endpoint_hours_hour ON hookd_endpoint_hours (hour);
ANALYZE hookd_endpoint_hours;
