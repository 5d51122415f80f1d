#!/usr/bin/env bash
# Retention on PostgreSQL: batched deletes (what hookd does) against daily partitions dropped
# whole, measured on the same data and the same send load. docs/retention.md quotes its output.
#
#   scripts/retention-partitions.sh [postgres://USER@HOST:PORT/DB]   (default: a database
#                                                                   hookd_partitions on 127.0.0.1)
#
# It makes two schemas of one database with the same rows: "plain", a table of messages and one
# of attempts (three a message) with hookd's keys and indexes, and "parted", the same tables
# partitioned by day of the message's creation time (every key then includes that time). Each
# holds DAYS days of MESSAGES_PER_DAY messages. For each schema, pgbench sends at RATE
# transactions a second (a message and its three attempts, one transaction each) for SECONDS:
# first with nothing else running, then while the oldest day is deleted: on plain in batches of
# BATCH messages with their attempts, each followed by a rest as long as it took (hookd's pacing
# on PostgreSQL); on parted by dropping that day's two partitions. It prints each phase's send
# latency (p50, p99, max, from pgbench's per-transaction log) and the sweep's duration, then the
# latency of reading a message by its id alone (what every API get does), on each schema.
# Needs psql and pgbench; drops and recreates the database.
set -euo pipefail

URL=${1:-postgres://postgres@127.0.0.1:5432/hookd_partitions?sslmode=disable}
DAYS=${DAYS:-31}
MESSAGES_PER_DAY=${MESSAGES_PER_DAY:-20000}
RATE=${RATE:-100}
SECONDS_=${SECONDS_:-30}
BATCH=${BATCH:-500}

admin=${URL%/*}/postgres?sslmode=disable
db=${URL##*/}
db=${db%%\?*}
psql -qX "$admin" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
q() { psql -qXAt -v ON_ERROR_STOP=1 "$URL" "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "setup: $DAYS days of $MESSAGES_PER_DAY messages, 3 attempts each, in both schemas"
q <<SQL
CREATE SCHEMA plain;
CREATE TABLE plain.messages (id text PRIMARY KEY, app_id text NOT NULL, event_type text NOT NULL,
    payload bytea, created_at timestamptz NOT NULL);
CREATE INDEX ON plain.messages (app_id, id);
CREATE INDEX ON plain.messages (created_at);
CREATE TABLE plain.attempts (id text PRIMARY KEY, message_id text NOT NULL REFERENCES plain.messages ON DELETE CASCADE,
    endpoint_id text NOT NULL, at timestamptz NOT NULL, status_code int NOT NULL, response text NOT NULL,
    request_headers text NOT NULL);
CREATE INDEX ON plain.attempts (message_id);
CREATE INDEX ON plain.attempts (endpoint_id, id);

CREATE SCHEMA parted;
CREATE TABLE parted.messages (id text NOT NULL, app_id text NOT NULL, event_type text NOT NULL,
    payload bytea, created_at timestamptz NOT NULL, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
CREATE INDEX ON parted.messages (app_id, id);
CREATE TABLE parted.attempts (id text NOT NULL, message_id text NOT NULL, created_at timestamptz NOT NULL,
    endpoint_id text NOT NULL, at timestamptz NOT NULL, status_code int NOT NULL, response text NOT NULL,
    request_headers text NOT NULL, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
CREATE INDEX ON parted.attempts (message_id);
CREATE INDEX ON parted.attempts (endpoint_id, id);
DO \$\$
DECLARE d date;
BEGIN
  FOR i IN -$DAYS..2 LOOP
    d := current_date + i;
    EXECUTE format('CREATE TABLE parted.messages_%s PARTITION OF parted.messages FOR VALUES FROM (%L) TO (%L)',
      to_char(d, 'YYYYMMDD'), d, d + 1);
    EXECUTE format('CREATE TABLE parted.attempts_%s PARTITION OF parted.attempts FOR VALUES FROM (%L) TO (%L)',
      to_char(d, 'YYYYMMDD'), d, d + 1);
  END LOOP;
END \$\$;

CREATE TEMP TABLE m AS
  SELECT 'msg_' || to_char(t, 'YYYYMMDDHH24MISSUS') || lpad(n::text, 8, '0') AS id,
         'app_' || (n % 100) AS app_id, 'event.' || (n % 20) AS event_type,
         convert_to(repeat('x', 180), 'UTF8') AS payload, t AS created_at
  FROM (SELECT n, current_date - $DAYS + (n::float8 / $MESSAGES_PER_DAY) * interval '1 day' AS t
        FROM generate_series(0, $DAYS * $MESSAGES_PER_DAY - 1) n) s;
INSERT INTO plain.messages SELECT * FROM m;
INSERT INTO parted.messages SELECT * FROM m;
CREATE TEMP TABLE a AS
  SELECT 'atmpt_' || substr(m.id, 5) || k AS id, m.id AS message_id, m.created_at,
         'ep_' || ((hashtext(m.id) & 1023) + k) AS endpoint_id, m.created_at + interval '50 ms' AS at,
         200 AS status_code, '{"received":true}' AS response,
         '~abcdefg|0|v1,' || md5(m.id) || md5(m.id || k) AS request_headers
  FROM m, generate_series(1, 3) k;
INSERT INTO plain.attempts SELECT id, message_id, endpoint_id, at, status_code, response, request_headers FROM a;
INSERT INTO parted.attempts SELECT * FROM a;
VACUUM ANALYZE;
SQL

# send.sql: one message and its three attempts, as a send and its deliveries' records write them.
for s in plain parted; do
  cols="created_at"
  [[ $s == plain ]] && cols=""
  cat >"$work/send-$s.sql" <<SQL
\set n random(1, 1000000000)
BEGIN;
INSERT INTO $s.messages (id, app_id, event_type, payload, created_at)
  VALUES ('msg_n' || :client_id || '_' || :n || '_' || txid_current(), 'app_' || (:n % 100), 'event.1', convert_to(repeat('x', 180), 'UTF8'), now());
INSERT INTO $s.attempts (id, message_id, ${cols:+created_at,} endpoint_id, at, status_code, response, request_headers)
  SELECT 'atmpt_n' || :client_id || '_' || :n || '_' || txid_current() || k, 'msg_n' || :client_id || '_' || :n || '_' || txid_current(),
    ${cols:+now(),} 'ep_' || k, now(), 200, '{"received":true}', '~abcdefg|0|v1,' || md5(:n::text)
  FROM generate_series(1, 3) k;
COMMIT;
SQL
done

# percentiles LOG: p50, p99 and max of a pgbench log's latencies (µs, third column), in ms.
percentiles() {
  sort -n -k3 "$@" | awk '{ l[NR] = $3 } END { printf "p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d", l[int(NR*0.5)]/1000, l[int(NR*0.99)]/1000, l[NR]/1000, NR }'
}

# sends SCHEMA NAME: pgbench at RATE for SECONDS_ in the background; its log lands in $work/NAME.
sends() {
  (cd "$work" && pgbench -n -c 4 -j 2 -R "$RATE" -T "$SECONDS_" -f "send-$1.sql" -l --log-prefix="$2" "$URL" >/dev/null 2>&1) &
}

oldest=$(date -u -d "$(q -c "SELECT current_date - $DAYS")" +%Y%m%d)
for s in plain parted; do
  sends "$s" "$s-quiet"
  wait
  echo "$s, sends alone: $(percentiles "$work/$s-quiet".*) sends"

  sends "$s" "$s-sweep"
  pid=$!
  sleep 2
  start=$(date +%s.%N)
  if [[ $s == plain ]]; then
    # hookd's batches: the oldest messages by creation time with their attempts (the cascade),
    # each batch its own transaction, then a rest as long as the batch took.
    while :; do
      b0=$(date +%s.%N)
      n=$(q -c "DELETE FROM plain.messages WHERE id IN (SELECT id FROM plain.messages
                WHERE created_at < current_date - $DAYS + 1 ORDER BY created_at LIMIT $BATCH) RETURNING 1" | wc -l)
      [[ $n -eq 0 ]] && break
      sleep "$(awk -v a="$b0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
    done
  else
    q -c "DROP TABLE parted.attempts_$oldest" -c "DROP TABLE parted.messages_$oldest"
  fi
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  wait "$pid"
  echo "$s, sends during the sweep: $(percentiles "$work/$s-sweep".*) sends; the oldest day ($MESSAGES_PER_DAY messages) deleted in ${took}s"
done

# A get by id alone, as the API reads a message: one index probe on plain, one per partition on parted.
q -c "SELECT id FROM plain.messages ORDER BY random() LIMIT 1000" >"$work/ids"
for s in plain parted; do
  cat >"$work/get-$s.sql" <<SQL
\set i random(1, 1000)
SELECT * FROM $s.messages WHERE id = (SELECT id FROM get_ids WHERE i = :i);
SQL
done
q -c "CREATE TABLE get_ids (i serial PRIMARY KEY, id text)" -c "\copy get_ids (id) FROM '$work/ids'"
for s in plain parted; do
  (cd "$work" && pgbench -n -c 2 -j 2 -T 10 -f "get-$s.sql" -l --log-prefix="get-$s" "$URL" >/dev/null 2>&1)
  echo "$s, a message by id: $(percentiles "$work/get-$s".*) (reads)"
done
