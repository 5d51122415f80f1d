package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
)

// repairRig is a process on a schema: a store whose logs the test reads, and a client on the
// store's own queue, not started, with an application and an endpoint on a receiver.
type repairRig struct {
	ctx    context.Context
	store  *postgres.Store
	client *hookd.Client
	log    *logcheck.Log
}

// newRepairRig opens a process on schema (fresh, or a rig's).
func newRepairRig(t *testing.T, u, schema string) *repairRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	log := logcheck.New(t)
	s, err := postgres.Open(ctx, u, &postgres.Config{Schema: schema, Logger: log.LoggerTo(t.Output(), slog.LevelWarn)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c, err := hookd.NewClient(s, &hookd.Config{
		Delivery: &delivery.Config{Timeout: 2 * time.Second, AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Logger:   log.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &repairRig{ctx: ctx, store: s, client: c, log: log}
}

// start starts the rig's client, stopped when the test ends.
func (r *repairRig) start(t *testing.T) {
	t.Helper()
	if err := r.client.Start(r.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.client.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
}

// exec runs statements on the rig's store, failing the test on an error.
func (r *repairRig) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := r.store.Pool().Exec(r.ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// app creates an application with an endpoint at the receiver's path /hooks.
func (r *repairRig) app(t *testing.T, recv *hookdtest.Receiver) (appID, epID string) {
	t.Helper()
	app, err := r.client.CreateApplication(r.ctx, &hookd.ApplicationIn{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := r.client.CreateEndpoint(r.ctx, app.ID, &hookd.EndpointIn{URL: recv.URL("/hooks")})
	if err != nil {
		t.Fatal(err)
	}
	return app.ID, ep.ID
}

// repairLines returns the deliveries= counts of the repair's lines in logs.
func repairLines(logs string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`msg="hookd queue: gave a job to each pending delivery that had none" deliveries=(\d+)`).FindAllStringSubmatch(logs, -1) {
		out = append(out, m[1])
	}
	return out
}

// requestsByMessage counts the requests that arrived, by message id (the webhook-id header).
func requestsByMessage(recv *hookdtest.Receiver) map[string]int {
	n := map[string]int{}
	for _, req := range recv.Requests("/hooks") {
		n[req.WebhookID]++
	}
	return n
}

// TestRepairAdoptsRiverEraJobs: hookd's jobs left unfinished in River's table, as hookd wrote
// them when its queue was River (kind hookd_attempt, queues hookd_first, hookd_retry and
// hookd_manual, args {"d", "a", "t", "nb"}), move to hookd_jobs when the store's own queue starts
// and are each delivered once, with their attempt and NotBefore kept. A job that the delivery's
// own first job already makes is not moved. They leave River's table, which keeps its finished
// rows and every other kind's.
func TestRepairAdoptsRiverEraJobs(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	r := newRepairRig(t, u, freshSchema(t, u))
	recv := hookdtest.NewReceiver()
	t.Cleanup(recv.Close)
	appID, epID := r.app(t, recv)

	m, err := rivermigrate.New(riverpgxv5.New(r.store.Pool()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(r.ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Microsecond)
	type era struct {
		id       string
		attempts int // made before
		status   string
		ownFirst bool // the delivery row is its own first job
		// The River job: its queue, state, attempt and trigger, NotBefore (Unix µs, 0: none).
		queue, state, trigger string
		attempt               int
		nb                    int64
	}
	rows := []era{
		{id: "first", status: "pending", queue: "hookd_first", state: "available", trigger: "scheduled", attempt: 1},
		{id: "retry", attempts: 1, status: "pending", queue: "hookd_retry", state: "retryable", trigger: "scheduled", attempt: 2, nb: time.Now().Add(-time.Minute).UnixMicro()},
		{id: "later", attempts: 2, status: "pending", queue: "hookd_retry", state: "scheduled", trigger: "scheduled", attempt: 3, nb: later.UnixMicro()},
		{id: "died", attempts: 1, status: "pending", queue: "hookd_retry", state: "running", trigger: "scheduled", attempt: 2},
		{id: "own", status: "pending", ownFirst: true, queue: "hookd_first", state: "available", trigger: "scheduled", attempt: 1},
		{id: "manual", attempts: 1, status: "delivered", queue: "hookd_manual", state: "available", trigger: "manual", attempt: 1},
	}
	for _, e := range rows {
		r.exec(t, `INSERT INTO hookd_messages (id, app_id, event_type, payload, created_at) VALUES ($1, $2, 'invoice.paid', '{"n":1}', now())`, "msg_"+e.id, appID)
		r.exec(t, `INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts, next_attempt_at, created_at, updated_at, first_job)
			VALUES ($1, $2, $3, $4, $5, $6, now(), now(), now(), $7)`, "dlv_"+e.id, "msg_"+e.id, epID, appID, e.status, e.attempts, e.ownFirst)
		args := fmt.Sprintf(`{"d":%q,"a":%d,"t":%q}`, "dlv_"+e.id, e.attempt, e.trigger)
		if e.nb != 0 {
			args = fmt.Sprintf(`{"d":%q,"a":%d,"t":%q,"nb":%d}`, "dlv_"+e.id, e.attempt, e.trigger, e.nb)
		}
		scheduled := time.Now().Add(-time.Second)
		if e.state == "scheduled" {
			scheduled = time.UnixMicro(e.nb).Add(-5 * time.Second) // as River's queue scheduled a far job
		}
		r.exec(t, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, attempted_at)
			VALUES ($1, 'hookd_attempt', 10000, $2, $3::text::river_job_state, $4, CASE WHEN $3::text = 'running' THEN now() END)`, args, e.queue, e.state, scheduled)
	}
	r.exec(t, `INSERT INTO river_job (args, kind, max_attempts, queue, state, finalized_at)
		VALUES ('{"d":"dlv_gone","a":1}', 'hookd_attempt', 10000, 'hookd_first', 'completed', now()),
			('{"to":"someone@example.com"}', 'email', 25, 'default', 'available', NULL)`)

	r.start(t)
	ctx, cancel := context.WithTimeout(r.ctx, 20*time.Second)
	defer cancel()
	if _, err := recv.Wait(ctx, "/hooks", len(rows)); err != nil {
		t.Fatalf("%d requests arrived, want %d: %v", len(recv.Requests("/hooks")), len(rows), err)
	}
	time.Sleep(300 * time.Millisecond) // for a second request of a delivery, if any came
	got := requestsByMessage(recv)
	for _, e := range rows {
		if got["msg_"+e.id] != 1 {
			t.Errorf("delivery %s: %d requests, want 1", e.id, got["msg_"+e.id])
		}
	}
	for _, req := range recv.Requests("/hooks") {
		if req.WebhookID == "msg_later" && req.At.Before(later) {
			t.Errorf("the job due at %s arrived at %s", later.Format(time.StampMicro), req.At.Format(time.StampMicro))
		}
	}
	for id, want := range map[string]int{"first": 1, "retry": 2, "later": 3, "died": 2, "own": 1, "manual": 1} {
		d, err := r.store.GetDelivery(r.ctx, "dlv_"+id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != hookd.DeliveryDelivered || d.Attempts != want {
			t.Errorf("delivery %s: %s after %d attempts, want delivered after %d", id, d.Status, d.Attempts, want)
		}
	}
	var left []string
	rowsLeft, err := r.store.Pool().Query(r.ctx, `SELECT kind || ':' || state FROM river_job ORDER BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	for rowsLeft.Next() {
		var s string
		if err := rowsLeft.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if err := rowsLeft.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, " ") != "email:available hookd_attempt:completed" {
		t.Errorf("river_job holds %v, want the other kind's job and the finished one only", left)
	}
	logs := r.log.String()
	if !strings.Contains(logs, `msg="hookd jobs moved from River's table to hookd_jobs" jobs=5`) {
		t.Errorf("no line says the 5 jobs moved (the own first job's stays the delivery's); the logs:\n%s", logs)
	}
	if lines := repairLines(logs); len(lines) != 0 {
		t.Errorf("the repair found %v deliveries without a job, want none: the moved jobs are theirs", lines)
	}
}

// TestRepairOnceAcrossProcessesStartingAtOnce: two processes whose queues start at once on one
// schema repair one after the other (the repair's advisory lock): the first gives every
// stranded delivery one job and says so in one line, the second finds none, and each delivery
// arrives once.
func TestRepairOnceAcrossProcessesStartingAtOnce(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	schema := freshSchema(t, u)
	a, b := newRepairRig(t, u, schema), newRepairRig(t, u, schema)
	recv := hookdtest.NewReceiver()
	t.Cleanup(recv.Close)
	appID, epID := a.app(t, recv)
	const n = 2000
	a.exec(t, `INSERT INTO hookd_messages (id, app_id, event_type, payload, created_at)
			SELECT 'msg_' || lpad(g::text, 5, '0'), $1, 'invoice.paid', '{"n":1}', now() FROM generate_series(1, $2::int) AS g`, appID, n)
	a.exec(t, `INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, next_attempt_at, created_at, updated_at, first_job)
			SELECT 'dlv_' || lpad(g::text, 5, '0'), 'msg_' || lpad(g::text, 5, '0'), $2, $1, 'pending', now(), now(), now(), false
			FROM generate_series(1, $3::int) AS g`, appID, epID, n)

	var wg sync.WaitGroup
	begin := make(chan struct{})
	for _, r := range []*repairRig{a, b} {
		wg.Go(func() {
			<-begin
			r.start(t)
		})
	}
	close(begin)
	wg.Wait()
	ctx, cancel := context.WithTimeout(a.ctx, 45*time.Second)
	defer cancel()
	if _, err := recv.Wait(ctx, "/hooks", n); err != nil {
		t.Fatalf("%d requests arrived, want %d: %v", len(recv.Requests("/hooks")), n, err)
	}
	time.Sleep(300 * time.Millisecond) // for a second request of a delivery, if any came
	twice := 0
	for _, c := range requestsByMessage(recv) {
		if c != 1 {
			twice++
		}
	}
	if got := len(recv.Requests("/hooks")); got != n || twice != 0 {
		t.Errorf("%d requests for %d deliveries, %d of them more than once; want each once", got, n, twice)
	}
	lines := append(repairLines(a.log.String()), repairLines(b.log.String())...)
	if len(lines) != 1 || lines[0] != fmt.Sprint(n) {
		t.Errorf("repair lines of the two processes: %v, want one, of %d deliveries", lines, n)
	}
}

// TestRepairPlanReadsPendingDeliveriesOnly plans the repair on a table of 50,000 delivered
// deliveries and 50 pending ones, analyzed: it walks the pending deliveries' index and reads
// none of the others (no sequential scan of the deliveries).
func TestRepairPlanReadsPendingDeliveriesOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	fill := `INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', now(), now());
		INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at, ordered)
			SELECT 'ep_' || g, 'app_1', 'https://example.com/', now(), now(), g % 2 = 0 FROM generate_series(0, 49) AS g;
		INSERT INTO hookd_messages (id, app_id, event_type, created_at)
			SELECT 'msg_' || lpad(g::text, 6, '0'), 'app_1', 'x', now() FROM generate_series(1, 50000) AS g;
		INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts, next_attempt_at, created_at, updated_at, first_job)
			SELECT 'dlv_' || lpad(g::text, 6, '0'), 'msg_' || lpad(g::text, 6, '0'), 'ep_' || (g % 50), 'app_1',
				CASE WHEN g % 1000 = 0 THEN 'pending' ELSE 'delivered' END, 1,
				CASE WHEN g % 2000 = 0 THEN NULL ELSE now() END, now(), now(), false
			FROM generate_series(1, 50000) AS g;
		INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt)
			SELECT 'retry', now(), 'dlv_' || lpad(g::text, 6, '0'), 2 FROM generate_series(1000, 50000, 3000) AS g;
		ANALYZE`
	if _, err := b.store.Pool().Exec(ctx, fill); err != nil {
		t.Fatal(err)
	}
	rows, err := b.store.Pool().Query(ctx, `EXPLAIN `+postgres.RepairJobsSQL, time.Now())
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
	if !strings.Contains(text, "hookd_deliveries_pending") || strings.Contains(text, "Seq Scan on hookd_deliveries") {
		t.Errorf("the repair does not walk the pending deliveries' index alone:\n%s", text)
	}
}
