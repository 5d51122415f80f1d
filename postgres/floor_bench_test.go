package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd/internal/procmem"
	"github.com/hookd/hookd/postgres"
)

// BenchmarkRowFloor measures what PostgreSQL itself spends on the rows one delivery leaves, with
// no hookd in the way: the statements make their rows from generate_series and sequences on the
// server, one round trip each, so no parameters cross the wire and no Go code runs per row. Each
// iteration is one message to 10 endpoints, in two phases like B1's:
//
//   - send: 8 connections, one transaction a message: the message, its 10 deliveries and their
//     jobs;
//   - work: one connection, batches of 30 jobs: a claim (moving run_at, as the queue does), then
//     in one transaction the attempts inserted, the deliveries marked delivered, the endpoints'
//     health updated and the jobs deleted. It plans as the queue's own pool does
//     (postgres.QueuePlanParams) and without JIT; the send phase with the server's defaults, as
//     the store's main pool.
//
// It reports the CPU time of the PostgreSQL backends that ran them (user + system, from
// /proc/<pid>/stat, so the server must run on this machine) per delivery, for three schemas:
//
//   - schema=hookd, the migrations as they are: the floor under hookd's own PostgreSQL CPU per
//     delivery (B1's "this run's postgres backends");
//   - schema=lean, without the three indexes hookd could most easily do without (the endpoints'
//     undelivered deliveries, pending deliveries, attempts by application), and with
//     room on the delivery table's pages, so that marking a delivery delivered is a HOT update
//     that writes no index entry;
//   - schema=bare, the same tables with only their primary keys and the job queue's index: no
//     other index, no foreign key, which no list of the API could do without.
//
// Run it with
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run x -bench RowFloor -benchtime 2000x ./postgres/
func BenchmarkRowFloor(b *testing.B) {
	for _, schema := range []string{"hookd", "lean", "bare"} {
		b.Run("schema="+schema, func(b *testing.B) {
			bd := setup(b)
			ctx := context.Background()
			u := inSchema(b, bd.url, bd.schema)
			setupSQL := `CREATE SEQUENCE floor_ids;
				INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_floor', 'floor', now(), now());
				INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at)
					SELECT 'ep_floor' || g, 'app_floor', 'http://127.0.0.1:1/ep' || g, now(), now() FROM generate_series(1, 10) AS g`
			if schema == "lean" {
				setupSQL += `;
				DROP INDEX hookd_deliveries_endpoint_id_undelivered, hookd_deliveries_pending,
					hookd_attempts_app_id;
				ALTER TABLE hookd_deliveries SET (fillfactor = 60)`
			}
			if schema == "bare" {
				setupSQL += `;
				DROP INDEX hookd_messages_event_id, hookd_messages_app_id, hookd_messages_app_id_event_type,
					hookd_deliveries_endpoint_id_undelivered, hookd_deliveries_endpoint_id_delivered, hookd_deliveries_pending,
					hookd_attempts_message_id, hookd_attempts_endpoint_id, hookd_attempts_app_id;
				ALTER TABLE hookd_deliveries DROP CONSTRAINT hookd_deliveries_message_id_fkey,
					DROP CONSTRAINT hookd_deliveries_message_id_endpoint_id_key;
				ALTER TABLE hookd_attempts DROP CONSTRAINT hookd_attempts_message_id_fkey`
			}
			if _, err := bd.store.Pool().Exec(ctx, setupSQL); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			// One run of b.N messages, not b.N runs: the work phase takes them all at once.
			send := floorPhase(b, u, 8, b.N, true)
			work := floorPhase(b, u, 1, 0, false)
			b.StopTimer()
			var left int
			if err := bd.store.Pool().QueryRow(ctx, `SELECT count(*) FROM hookd_jobs`).Scan(&left); err != nil {
				b.Fatal(err)
			}
			if left != 0 {
				b.Fatalf("%d jobs left after the work phase", left)
			}
			deliveries := float64(10 * b.N)
			b.ReportMetric(float64(send.Microseconds())/deliveries, "send-pg-µs/delivery")
			b.ReportMetric(float64(work.Microseconds())/deliveries, "work-pg-µs/delivery")
			b.ReportMetric(float64((send+work).Microseconds())/deliveries, "pg-µs/delivery")
		})
	}
}

// The floor's statements: see BenchmarkRowFloor.
const (
	floorSend = `WITH m AS (
		INSERT INTO hookd_messages (id, app_id, event_type, payload, created_at)
		SELECT 'msg_' || lpad(nextval('floor_ids')::text, 22, '0'), 'app_floor', 'bench.event',
			convert_to(repeat('x', 98), 'UTF8'), now()
		RETURNING id, app_id
	), d AS (
		INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts, next_attempt_at, created_at, updated_at)
		SELECT 'dlv_' || lpad(nextval('floor_ids')::text, 22, '0'), m.id, e.id, e.app_id, 'pending', 0, now(), now(), now()
		FROM m, hookd_endpoints e
		RETURNING id
	)
	INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind)
	SELECT 'first', now(), d.id, 1, 'scheduled' FROM d`

	floorClaim = `WITH c AS (
		SELECT ctid FROM hookd_jobs WHERE lane = 'first' AND run_at <= now()
		ORDER BY run_at, id LIMIT 30 FOR UPDATE SKIP LOCKED
	), u AS (
		UPDATE hookd_jobs j SET run_at = now() + interval '60 seconds', claims = j.claims + 1
		FROM c WHERE j.ctid = c.ctid RETURNING j.id, j.ctid, j.delivery_id
	)
	INSERT INTO floor_claimed SELECT * FROM u`

	floorRecord = `WITH a AS (
		INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind,
			url, at, duration_us, status_code, success, error, response)
		SELECT 'atmpt_' || lpad(nextval('floor_ids')::text, 22, '0'), d.id, d.message_id, d.endpoint_id, d.app_id,
			1, 'scheduled', 'http://127.0.0.1:1/ep', now(), 2358, 204, true, '', ''::bytea
		FROM floor_claimed c JOIN hookd_deliveries d ON d.id = c.delivery_id
	), u AS (
		UPDATE hookd_deliveries d SET status = 'delivered', attempts = 1, next_attempt_at = NULL, updated_at = now()
		FROM floor_claimed c WHERE d.id = c.delivery_id
	), e AS (
		UPDATE hookd_endpoints e SET last_attempt_at = now(), last_status = 204
		WHERE e.id = ANY (ARRAY(SELECT d.endpoint_id FROM floor_claimed c JOIN hookd_deliveries d ON d.id = c.delivery_id))
	)
	DELETE FROM hookd_jobs j USING floor_claimed c WHERE j.ctid = c.job_ctid AND j.id = c.job_id`
)

// floorPhase runs a phase on conns connections of their own until it is done, and returns the
// CPU time their backends spent: the send phase (send) sends n messages, the work phase works
// until no job is left.
func floorPhase(b *testing.B, u string, conns, n int, send bool) time.Duration {
	b.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		b.Fatal(err)
	}
	if !send {
		for _, p := range postgres.QueuePlanParams {
			cfg.RuntimeParams[p] = "off"
		}
		cfg.RuntimeParams["jit"] = "off"
	}
	var (
		cs   []*pgx.Conn
		pids []int
	)
	for range conns {
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		var pid int
		if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			b.Fatal(err)
		}
		if !send {
			if _, err := c.Exec(ctx, `CREATE TEMP TABLE floor_claimed (job_id bigint, job_ctid tid, delivery_id text COLLATE "C")`); err != nil {
				b.Fatal(err)
			}
		}
		cs, pids = append(cs, c), append(pids, pid)
	}
	before := backendsCPU(b, pids)
	var (
		wg   sync.WaitGroup
		left atomic.Int64 // messages still to send
		errs = make(chan error, conns)
	)
	left.Store(int64(n))
	for _, c := range cs {
		wg.Go(func() {
			var err error
			if send {
				for left.Add(-1) >= 0 {
					if _, err = c.Exec(ctx, floorSend); err != nil {
						break
					}
				}
			} else {
				err = floorWorkAll(ctx, c)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return backendsCPU(b, pids) - before
}

// floorWorkAll claims and records batches of jobs until none is left.
func floorWorkAll(ctx context.Context, c *pgx.Conn) error {
	for {
		tag, err := c.Exec(ctx, floorClaim)
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, floorRecord); err != nil {
			_ = tx.Rollback(ctx)
			return fmt.Errorf("record: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM floor_claimed`); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
}

// backendsCPU is the CPU time (user + system) the backends pids have used so far.
func backendsCPU(b *testing.B, pids []int) time.Duration {
	b.Helper()
	var sum time.Duration
	for _, pid := range pids {
		cpu, err := procmem.CPU(pid)
		if err != nil {
			b.Skipf("the PostgreSQL backends' CPU time: %v (the server must run on this machine)", err)
		}
		sum += cpu
	}
	return sum
}
