package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
)

// TestHotStatementsNeverScanWholeTables plans the statements every job goes through the way a
// long-lived connection does, generically, on tables with no statistics (a new installation, or
// a database with autovacuum off), empty and then with a few thousand rows (deliveries that are
// their own first job, and jobs): the plans PostgreSQL then caches, and keeps as the tables grow. Each must reach rows through an index or by ctid: no sequential scan of a
// hookd table, no hash join, and no sort for the claim. (Measured on B1 before: the claims,
// outcomes and batch loads scanned the whole job and message tables a thousand times a run.)
func TestHotStatementsNeverScanWholeTables(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	statements := []struct {
		name, sql, args string
		async           bool // runs on the queue's own pool, with its settings
	}{
		{"enqueue", postgres.InsertJobsSQL, `('{first,retry}', ARRAY[now(), now()], '{dlv_1,dlv_2}', '{1,2}', '{scheduled,scheduled}',
			ARRAY[NULL, now()]::timestamptz[], '{true,false}', '{dlv_3}', 'hookd_jobs_x', '{first}')`, false},
		{"claim", postgres.ClaimJobsSQL, `('first', now(), now(), '30 seconds', 100)`, true},
		{"finish", postgres.FinishJobsSQL, `('{"(0,1)"}', '{1}', '{1}', '{"(0,2)"}', '{2}', '{1}', ARRAY[now()], '{0}', '{""}',
			'{"(0,3)","(0,4)"}', '{dlv_1,dlv_2}', '{1,1}', '{false,true}', '{true,false}', ARRAY[now(), now()], '{0,0}', '{"",""}')`, true},
		{"load_work", postgres.LoadWorkBatchSQL, `('{dlv_1,dlv_2}')`, false},
		{"record_attempts", postgres.RecordAttemptsSQL, "(" + strings.Repeat(`'{}', `, 30) + `'{}')`, false},
		{"renew_slots", postgres.RenewSlotsSQL, `('h_1', '{ep_1,ep_2}', 10000000)`, false},
		{"release_slots", postgres.ReleaseSlotsSQL, `('ep_1', 'h_1', 1)`, false},
		{"drop_slots", postgres.DropSlotsSQL, `('ep_1', 'h_1')`, false},
		// A send batch's (postgres.Store's InTx, hookd.MessageBatchWriter).
		{"send_apps", postgres.SendAppsSQL, `('{app_1,acme}')`, false},
		{"send_endpoints", postgres.SendEndpointsSQL, `('{app_1,acme}')`, false},
		{"insert_messages", postgres.InsertMessagesSQL, `('{msg_new}', '{app_1}', '{e_1}', '{x}', '{NULL}', '{NULL}', ARRAY[now()], '{NULL}', '{NULL}')`, false},
		{"existing_messages", postgres.ExistingMessagesSQL, `('{app_1,app_1}', '{e_1,e_2}')`, false},
		{"insert_channels", postgres.InsertChannelsSQL, `('{app_1}', '{eu}', '{msg_1}')`, false},
		{"insert_tags", postgres.InsertTagsSQL, `('{app_1}', '{t}', '{msg_1}')`, false},
	}
	fill := `INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', now(), now());
		INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at)
			SELECT 'ep_' || g, 'app_1', 'https://example.com/', now(), now() FROM generate_series(1, 5000) AS g;
		INSERT INTO hookd_messages (id, app_id, event_type, created_at)
			SELECT 'msg_' || g, 'app_1', 'x', now() FROM generate_series(1, 5000) AS g;
		INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, created_at, updated_at)
			SELECT 'dlv_' || g, 'msg_' || g, 'ep_1', 'app_1', 'pending', now(), now() FROM generate_series(1, 5000) AS g;
		INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt)
			SELECT 'first', now(), 'dlv_' || g, 1 FROM generate_series(1, 5000) AS g;
		INSERT INTO hookd_endpoint_slots (endpoint_id, holder, slots, lease_until)
			SELECT 'ep_' || (g % 2500), 'h_fill_' || (g / 2500), 1, now() + interval '1 hour' FROM generate_series(1, 5000) AS g`
	for _, filled := range []int{0, 5000} {
		if filled > 0 {
			if _, err := b.store.Pool().Exec(ctx, fill); err != nil {
				t.Fatal(err)
			}
		}
		for _, st := range statements {
			t.Run(fmt.Sprintf("%s/%d_rows", st.name, filled), func(t *testing.T) {
				pool := b.store.Pool()
				if st.async {
					pool = postgres.AsyncPool(b.store)
				}
				c, err := pool.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Release()
				if _, err := c.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
					t.Fatal(err)
				}
				defer func() { _, _ = c.Exec(ctx, `RESET plan_cache_mode; DEALLOCATE hot`) }()
				if _, err := c.Exec(ctx, `PREPARE hot AS `+st.sql); err != nil {
					t.Fatal(err)
				}
				rows, err := c.Query(ctx, `EXPLAIN EXECUTE hot`+st.args)
				if err != nil {
					t.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, line)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				text := strings.Join(plan, "\n")
				checkPlan(t, text, filled, st.name)
			})
		}
		t.Run(fmt.Sprintf("acquire_slots/%d_rows", filled), func(t *testing.T) {
			checkPlan(t, acquirePlans(t, b), filled, "acquire_slots")
		})
	}
}

// checkPlan fails t when a plan of statement name, on tables of filled rows, scans a hookd
// table whole, joins by hash or sorts.
func checkPlan(t *testing.T, text string, filled int, name string) {
	t.Helper()
	for _, bad := range []string{"Seq Scan on hookd_", "Hash Join", "Sort"} {
		// An empty endpoint table is scanned whole by the attempt record's plan cached
		// then, until the connection is replaced (pgxpool: within an hour) or the table
		// analyzed. An installation's endpoints are few next to its deliveries.
		if filled == 0 && bad == "Seq Scan on hookd_" && name == "record_attempts" {
			text = strings.ReplaceAll(text, "Seq Scan on hookd_endpoints", "")
		}
		if strings.Contains(text, bad) {
			t.Errorf("the generic plan has a %q:\n%s", bad, text)
		}
	}
}

// acquirePlans calls hookd_acquire_slots on a connection of its own with generic plans, and
// returns the plans of the statements inside it, which auto_explain sends as notices.
func acquirePlans(t *testing.T, b *bundle) string {
	ctx := context.Background()
	conn, plans := explainingConn(t, b)
	// Twice: the second call runs the plans PL/pgSQL cached at the first.
	for range 2 {
		if _, err := conn.Exec(ctx, postgres.AcquireSlotsSQL, "ep_1", "h_1", 1, 2, 8, int64(10_000_000), int64(1_000_000)); err != nil {
			t.Fatal(err)
		}
	}
	text := plans()
	for _, want := range []string{"DELETE FROM hookd_endpoint_slots", "sum(slots)", "INSERT INTO hookd_endpoint_slots"} {
		if !strings.Contains(text, want) {
			t.Fatalf("auto_explain showed no plan of %q inside hookd_acquire_slots:\n%s", want, text)
		}
	}
	return text
}

// TestListPlans plans the lists and reads of attempts and deliveries whose indexes
// migration 15 changed, generically, on tables without statistics and then analyzed: each must
// walk the indexes named (no sequential scan of a hookd table), and return the rows
// that the filter names. A delivery's attempts are found through its message's index, since no
// index holds delivery_id; an endpoint's deliveries of a status other than delivered through
// the partial index of its undelivered ones, and its delivered ones through the other partial
// index; a list of every status merges the two.
func TestListPlans(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	// 40 endpoints, 4,000 messages of one delivery each: dlv_g to ep_(g % 40), every 10th
	// failed, every 25th pending (every 50th of those parked), the rest delivered; one attempt
	// each, and a second for the failed ones.
	fill := `INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', now(), now()), ('app_2', 'b', now(), now());
		INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at)
			SELECT 'ep_' || g, 'app_1', 'https://example.com/', now(), now() FROM generate_series(0, 39) AS g;
		INSERT INTO hookd_messages (id, app_id, event_type, created_at)
			SELECT 'msg_' || lpad(g::text, 5, '0'), 'app_1', 'x', now() FROM generate_series(1, 4000) AS g;
		INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, next_attempt_at, created_at, updated_at, first_job)
			SELECT 'dlv_' || lpad(g::text, 5, '0'), 'msg_' || lpad(g::text, 5, '0'), 'ep_' || (g % 40), 'app_1',
				CASE WHEN g % 10 = 0 THEN 'failed' WHEN g % 25 = 0 THEN 'pending' ELSE 'delivered' END,
				CASE WHEN g % 50 = 0 THEN NULL ELSE now() END, now(), now(), false
			FROM generate_series(1, 4000) AS g;
		INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind, url, at,
				duration_us, status_code, success)
			SELECT 'atmpt_' || lpad(g::text, 5, '0') || '_' || n, 'dlv_' || lpad(g::text, 5, '0'), 'msg_' || lpad(g::text, 5, '0'),
				'ep_' || (g % 40), 'app_1', n, 'scheduled', 'https://example.com/', now(), 1000, 200, true
			FROM generate_series(1, 4000) AS g, generate_series(1, 2) AS n WHERE n = 1 OR g % 10 = 0`
	if _, err := b.store.Pool().Exec(ctx, fill); err != nil {
		t.Fatal(err)
	}
	conn, plans := explainingConn(t, b)
	reads := postgres.ReadsOn(conn)
	cases := []struct {
		name, index string
		read        func() (int, error) // the rows it returned
		want        int
	}{
		{"attempts_of_a_delivery", "hookd_attempts_message_id", func() (int, error) {
			p, err := reads.ListAttempts(ctx, hookd.AttemptFilter{AppID: "app_1", DeliveryID: "dlv_00010"})
			return pageLen(p, err)
		}, 2},
		{"attempts_of_a_delivery_and_endpoint", "hookd_attempts_message_id", func() (int, error) {
			p, err := reads.ListAttempts(ctx, hookd.AttemptFilter{AppID: "app_1", DeliveryID: "dlv_00011", EndpointID: "ep_11"})
			return pageLen(p, err)
		}, 1},
		{"attempts_of_a_delivery_and_message", "hookd_attempts_message_id", func() (int, error) {
			p, err := reads.ListAttempts(ctx, hookd.AttemptFilter{AppID: "app_1", DeliveryID: "dlv_00030", MessageID: "msg_00030"})
			return pageLen(p, err)
		}, 2},
		{"attempts_of_a_message", "hookd_attempts_message_id", func() (int, error) {
			p, err := reads.ListAttempts(ctx, hookd.AttemptFilter{AppID: "app_1", MessageID: "msg_00020"})
			return pageLen(p, err)
		}, 2},
		{"attempts_of_an_endpoint", "hookd_attempts_endpoint_id", func() (int, error) {
			p, err := reads.ListAttempts(ctx, hookd.AttemptFilter{AppID: "app_1", EndpointID: "ep_3", ListOptions: hookd.ListOptions{Limit: 250}})
			return pageLen(p, err)
		}, 100},
		{"endpoint_failed", "hookd_deliveries_endpoint_id_undelivered", func() (int, error) {
			p, err := reads.ListDeliveries(ctx, hookd.DeliveryFilter{AppID: "app_1", EndpointID: "ep_10", Status: hookd.DeliveryFailed, ListOptions: hookd.ListOptions{Limit: 250}})
			return pageLen(p, err)
		}, 100},
		{"endpoint_pending", "hookd_deliveries_endpoint_id_undelivered", func() (int, error) {
			p, err := reads.ListDeliveries(ctx, hookd.DeliveryFilter{AppID: "app_1", EndpointID: "ep_25", Status: hookd.DeliveryPending, ListOptions: hookd.ListOptions{Limit: 250}})
			return pageLen(p, err)
		}, 20}, // g % 40 = 25 and g % 25 = 0 and g % 10 != 0: g = 25, 225, 425, ... (every 200th)
		{"endpoint_delivered", "hookd_deliveries_endpoint_id_delivered", func() (int, error) {
			p, err := reads.ListDeliveries(ctx, hookd.DeliveryFilter{AppID: "app_1", EndpointID: "ep_1", Status: hookd.DeliveryDelivered, ListOptions: hookd.ListOptions{Limit: 250}})
			return pageLen(p, err)
		}, 100},
		{"endpoint_all", "hookd_deliveries_endpoint_id_delivered hookd_deliveries_endpoint_id_undelivered", func() (int, error) {
			p, err := reads.ListDeliveries(ctx, hookd.DeliveryFilter{AppID: "app_1", EndpointID: "ep_10", ListOptions: hookd.ListOptions{Limit: 250}})
			return pageLen(p, err)
		}, 100},
		{"first_pending", "hookd_deliveries_endpoint_id_undelivered", func() (int, error) {
			d, err := reads.FirstPendingDelivery(ctx, "ep_25")
			if err != nil || d.ID != "dlv_00025" {
				return 0, fmt.Errorf("first pending of ep_25: %+v, %w", d, err)
			}
			return 1, nil
		}, 1},
		{"parked", "hookd_deliveries_endpoint_id_undelivered", func() (int, error) {
			ds, err := reads.ParkedDeliveries(ctx, "ep_10", "", 100)
			return len(ds), err // g % 40 = 10 and g % 50 = 0 and g % 10 != 0: none (every such g is failed)
		}, 0},
		{"due", "hookd_deliveries_pending", func() (int, error) {
			ds, err := reads.DueDeliveries(ctx, time.Now().Add(time.Hour), "", 1000)
			return len(ds), err
		}, 80}, // g % 25 = 0 and g % 10 != 0: 160 of 4,000, of which g % 50 = 0 (half) have no next attempt time and are due at creation
	}
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := b.store.Pool().Exec(ctx, `ANALYZE hookd_attempts; ANALYZE hookd_deliveries`); err != nil {
				t.Fatal(err)
			}
			// A new connection: the plans cached on the first were made without statistics.
			conn, plans = explainingConn(t, b)
			reads = postgres.ReadsOn(conn)
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/analyzed=%v", c.name, analyzed), func(t *testing.T) {
				plans() // drops the plans of earlier reads
				n, err := c.read()
				if err != nil {
					t.Fatal(err)
				}
				if n != c.want {
					t.Errorf("%d rows, want %d", n, c.want)
				}
				text := plans()
				if strings.Contains(text, "Seq Scan on hookd_") {
					t.Errorf("the generic plan scans a whole table:\n%s", text)
				}
				for _, index := range strings.Fields(c.index) {
					if !regexp.MustCompile(`(using|Scan on) ` + index + `\b`).MatchString(text) {
						t.Errorf("the generic plan does not use %s:\n%s", index, text)
					}
				}
			})
		}
	}
	// An endpoint's deliveries of every status, one branch a status, page by page both ways: the
	// ids in order, each once.
	var want []string
	rows, err := b.store.Pool().Query(ctx, `SELECT id FROM hookd_deliveries WHERE endpoint_id = 'ep_10' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	opts := hookd.ListOptions{Limit: 7}
	var last *hookd.Page[hookd.Delivery]
	for {
		p, err := reads.ListDeliveries(ctx, hookd.DeliveryFilter{AppID: "app_1", EndpointID: "ep_10", ListOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range p.Data {
			got = append(got, d.ID)
		}
		last = p
		if p.Done {
			break
		}
		opts.Iterator = p.Iterator
	}
	if !slices.Equal(got, want) {
		t.Errorf("the endpoint's deliveries page by page: %v, want %v", got, want)
	}
	back, err := reads.ListDeliveries(ctx, hookd.DeliveryFilter{AppID: "app_1", EndpointID: "ep_10",
		ListOptions: hookd.ListOptions{Limit: 7, Iterator: last.PrevIterator, Backward: true}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(want) - len(last.Data); len(back.Data) != 7 || back.Data[6].ID != want[n-1] || back.Data[0].ID != want[n-7] {
		t.Errorf("the page before the last: %+v", back)
	}
	for _, f := range []hookd.AttemptFilter{
		{AppID: "app_1", DeliveryID: "dlv_none"},
		{AppID: "app_1", DeliveryID: "dlv_00011", EndpointID: "ep_12"}, // the delivery is to ep_11
		{AppID: "app_2", DeliveryID: "dlv_00011"},
		{AppID: "app_1", DeliveryID: "dlv_00011", MessageID: "msg_00012"},
	} {
		p, err := reads.ListAttempts(ctx, f)
		if err != nil || len(p.Data) != 0 || !p.Done || p.Iterator != "" || p.PrevIterator != "" {
			t.Errorf("attempts of %+v: %+v, %v", f, p, err)
		}
	}
}

func pageLen[T any](p *hookd.Page[T], err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return len(p.Data), nil
}

func sumHours(hs []hookd.HourCount) int {
	n := 0
	for _, h := range hs {
		n += h.Succeeded + h.Failed
	}
	return n
}

// explainingConn is a connection of b's schema that plans generically and sends the plan of
// every statement it runs as a notice (auto_explain), and a function that returns the plans
// sent since it was last called. It skips t where auto_explain cannot be loaded.
func explainingConn(t *testing.T, b *bundle) (*pgx.Conn, func() string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(inSchema(t, b.url, b.schema))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var plans []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		plans = append(plans, n.Message)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	for _, q := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`, `SET auto_explain.log_nested_statements = on`,
		`SET auto_explain.log_level = notice`, `SET client_min_messages = notice`, `SET plan_cache_mode = force_generic_plan`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Skipf("auto_explain, which shows the plans, is not loadable here: %s: %v", q, err)
		}
	}
	return conn, func() string {
		mu.Lock()
		defer mu.Unlock()
		text := strings.Join(plans, "\n")
		plans = nil
		return text
	}
}
