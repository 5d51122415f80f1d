package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hookd/hookd/internal/upgradetest"
)

// Retry schedules of the build's servers. The first server's is short, so that a failing
// endpoint exhausts it in seconds; the second's first wait is longer than the second server
// runs, so that a delivery whose first attempt failed is still pending, its retry due soon after.
const (
	settleSchedule  = "1s,1s"
	pendingSchedule = "20s,20s"
	pendingWait     = 16 * time.Second // pendingSchedule's first wait less its 20 % jitter
)

// generator drives one build into the scenario and records what it answered.
type generator struct {
	o    *options
	addr string
	work string
	rcv  *receiver
	db   *database
	m    *upgradetest.Manifest
	help string // the build's "serve --help"

	eventTypes []string
	apps       []*app
}

type app struct {
	id   string
	eps  []*endpoint
	msgs []*message
}

type endpoint struct {
	id      string
	role    string
	path    string // the URL's path: /<app uid>/<role>
	rotated bool
	ordered bool
}

type message struct {
	id      string
	targets []*endpoint
}

func newGenerator(ctx context.Context, o *options, addr string) (*generator, error) {
	g := &generator{o: o, addr: addr}
	help, _ := exec.Command(o.hookd, "serve", "--help").CombinedOutput()
	g.help = string(help)
	if !strings.Contains(g.help, "-retry-schedule") {
		return nil, fmt.Errorf("%s serve has no --retry-schedule: not a build fixturegen knows", o.hookd)
	}
	var err error
	if g.work, err = os.MkdirTemp("", "fixturegen-"); err != nil {
		return nil, err
	}
	if g.rcv, err = newReceiver(addr); err != nil {
		return nil, err
	}
	if g.db, err = newDatabase(ctx, o, g.work); err != nil {
		return nil, err
	}
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	g.m = &upgradetest.Manifest{
		Store: o.store, State: o.state, Built: o.built, GeneratedAt: time.Now().UTC().Truncate(time.Second),
		Receiver: addr, AdminToken: "hookd_sk_upgrade_" + hex.EncodeToString(token),
	}
	return g, nil
}

func (g *generator) close() {
	g.rcv.close()
	g.db.drop(context.Background())
	_ = os.RemoveAll(g.work)
}

func (g *generator) skip(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(g.m.Skipped, s) {
		g.m.Skipped = append(g.m.Skipped, s)
	}
}

// start runs the build's server with the fixture's database and token and extra flags.
func (g *generator) start(extra ...string) (*server, *api, error) {
	args := append([]string{"--db", g.db.flag, "--token", g.m.AdminToken, "--allow-subnets", "127.0.0.0/8"}, extra...)
	s, err := startServer(g.o.hookd, args...)
	if err != nil {
		return nil, nil, err
	}
	return s, newAPI(s.url, g.m.AdminToken), nil
}

func (g *generator) generate(ctx context.Context) error {
	if err := g.settled(ctx); err != nil {
		return err
	}
	recorded, err := g.inFlight(ctx)
	if err != nil {
		return err
	}
	if !recorded {
		if err := g.queued(ctx); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(g.o.out); err != nil {
		return err
	}
	if err := os.MkdirAll(g.o.out, 0o755); err != nil {
		return err
	}
	if err := g.db.keep(ctx, g.o); err != nil {
		return err
	}
	g.m.Name = lastElem(g.o.out)
	return g.m.Write(g.o.out)
}

// settled is the first server: the event types, applications, endpoints and tokens, and
// deliveries that end delivered or failed under a short retry schedule. It stops with SIGTERM.
func (g *generator) settled(ctx context.Context) error {
	srv, a, err := g.start("--retry-schedule", settleSchedule)
	if err != nil {
		return err
	}
	g.m.Phases = append(g.m.Phases, "serve --retry-schedule "+settleSchedule+": event types, applications, endpoints, tokens; delivered and failed deliveries; SIGTERM")
	if err := g.settledScenario(ctx, a); err != nil {
		_ = srv.stop(syscall.SIGKILL)
		return fmt.Errorf("%w\nthe build's log:\n%s", err, srv.log())
	}
	return srv.stop(syscall.SIGTERM)
}

func (g *generator) settledScenario(ctx context.Context, a *api) error {
	if _, err := a.must(ctx, http.MethodGet, "/api/v1/health", nil, http.StatusOK, http.StatusNoContent); err != nil {
		return err
	}
	types := []map[string]any{
		{"name": "invoice.paid", "description": "An invoice was paid",
			"schemas": map[string]any{"1": map[string]any{"type": "object", "properties": map[string]any{"invoice": map[string]any{"type": "string"}}}}},
		{"name": "invoice.failed", "description": "A payment failed"},
		{"name": "user.created", "description": "A user signed up"},
		{"name": "order.updated", "description": "An order changed"},
	}
	for _, t := range types {
		code, b, err := a.do(ctx, http.MethodPost, "/api/v1/event-type", t)
		if err != nil {
			return err
		}
		switch {
		case code == http.StatusCreated || code == http.StatusOK:
			g.eventTypes = append(g.eventTypes, t["name"].(string))
		case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
			g.skip("event types: POST /api/v1/event-type answered %d", code)
		default:
			return fmt.Errorf("POST /api/v1/event-type: status %d: %s", code, b)
		}
	}

	acme, err := g.createApp(ctx, a, map[string]any{"name": "Acme Corp", "uid": "acme", "metadata": map[string]any{"tier": "gold", "region": "eu"}})
	if err != nil {
		return err
	}
	ok, err := g.createEndpoint(ctx, a, acme, "acme", upgradetest.RoleOK, map[string]any{
		"uid": "acme-ok", "description": "Acme's main receiver", "filterTypes": []string{"invoice.paid", "user.created"},
		"rateLimit": 100, "metadata": map[string]any{"team": "payments"},
	})
	if err != nil {
		return err
	}
	if err := g.customize(ctx, a, acme, ok, map[string]string{"X-Acme-Tenant": "tenant-1", "X-Trace": "fixture"}); err != nil {
		return err
	}
	billing, err := g.createEndpoint(ctx, a, acme, "acme", upgradetest.RoleOK, map[string]any{
		"uid": "acme-billing", "description": "Billing only", "filterTypes": []string{"invoice.paid"}, "channels": []string{"billing"},
	})
	if err != nil {
		return err
	}
	if err := g.portalToken(ctx, a, acme); err != nil {
		return err
	}

	globex, err := g.createApp(ctx, a, map[string]any{"name": "Globex", "uid": "globex", "retrySchedule": []int{1}, "timeoutSeconds": 5})
	if err != nil {
		return err
	}
	dead, err := g.createEndpoint(ctx, a, globex, "globex", upgradetest.RoleDead, map[string]any{
		"uid": "globex-dead", "description": "Answers 500 every time", "retrySchedule": []int{1, 1}, "timeoutSeconds": 5,
	})
	if err != nil {
		return err
	}

	if err := g.send(ctx, a, acme, "invoice.paid", []string{"billing"}, []*endpoint{ok, billing}); err != nil {
		return err
	}
	if err := g.send(ctx, a, acme, "user.created", nil, []*endpoint{ok}); err != nil {
		return err
	}
	for range 2 {
		if err := g.send(ctx, a, globex, "invoice.failed", nil, []*endpoint{dead}); err != nil {
			return err
		}
	}
	for _, ap := range []*app{acme, globex} {
		for _, msg := range ap.msgs {
			for _, ep := range msg.targets {
				want := statusSuccess
				if ep.role == upgradetest.RoleDead {
					want = statusFail
				}
				if err := g.waitStatus(ctx, a, ap, msg, ep, want, 60*time.Second); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// inFlight is the second server: deliveries whose first attempt failed, an ordered endpoint
// whose head failed with later messages behind it, and attempts hanging when the server is
// killed with SIGKILL. Without an API-only server to come, it records the manifest before the
// kill and reports true.
func (g *generator) inFlight(ctx context.Context) (bool, error) {
	srv, a, err := g.start("--retry-schedule", pendingSchedule)
	if err != nil {
		return false, err
	}
	record := !g.hasAPIRole()
	phase := "serve --retry-schedule " + pendingSchedule + ": deliveries pending after a failed attempt, an ordered endpoint's parked deliveries, attempts hanging; "
	if record {
		phase += "manifest recorded; "
	}
	g.m.Phases = append(g.m.Phases, phase+"SIGKILL")
	began := time.Now()
	err = g.inFlightScenario(ctx, a)
	if err == nil && time.Since(began) > pendingWait {
		err = fmt.Errorf("the second server ran %s, past the first retry of a failed delivery (%s): run again on a quieter machine", time.Since(began).Round(time.Second), pendingWait)
	}
	if err == nil && record {
		err = g.record(ctx, a)
	}
	if kerr := srv.stop(syscall.SIGKILL); err == nil {
		err = kerr
	}
	if err != nil {
		return false, fmt.Errorf("%w\nthe build's log:\n%s", err, srv.log())
	}
	return record, nil
}

func (g *generator) inFlightScenario(ctx context.Context, a *api) error {
	initech, err := g.createApp(ctx, a, map[string]any{"name": "Initech", "uid": "initech", "metadata": map[string]any{"plan": "trial"}, "retrySchedule": []int{20, 20}})
	if err != nil {
		return err
	}
	ok, err := g.createEndpoint(ctx, a, initech, "initech", upgradetest.RoleOK, map[string]any{"uid": "initech-ok"})
	if err != nil {
		return err
	}
	down, err := g.createEndpoint(ctx, a, initech, "initech", upgradetest.RoleDown, map[string]any{
		"uid": "initech-down", "description": "Down for now", "filterTypes": []string{"invoice.failed", "order.updated"},
		"metadata": map[string]any{"oncall": "bob"}, "retrySchedule": []int{20, 20}, "timeoutSeconds": 10,
	})
	if err != nil {
		return err
	}
	if err := g.customize(ctx, a, initech, down, map[string]string{"X-Initech-Key": "tps-report"}); err != nil {
		return err
	}
	umbrella, err := g.createApp(ctx, a, map[string]any{"name": "Umbrella", "uid": "umbrella"})
	if err != nil {
		return err
	}
	ordered, err := g.createEndpoint(ctx, a, umbrella, "umbrella", upgradetest.RoleOrdered, map[string]any{
		"uid": "umbrella-ordered", "description": "One at a time, in order", "ordered": true,
	})
	if err != nil {
		return err
	}
	hooli, err := g.createApp(ctx, a, map[string]any{"name": "Hooli", "uid": "hooli"})
	if err != nil {
		return err
	}
	hang, err := g.createEndpoint(ctx, a, hooli, "hooli", upgradetest.RoleHang, map[string]any{"uid": "hooli-hang"})
	if err != nil {
		return err
	}

	for _, et := range []string{"invoice.failed", "order.updated"} {
		if err := g.send(ctx, a, initech, et, nil, []*endpoint{ok, down}); err != nil {
			return err
		}
	}
	if ordered.ordered {
		if err := g.send(ctx, a, umbrella, "order.updated", nil, []*endpoint{ordered}); err != nil {
			return err
		}
		if err := g.waitStatus(ctx, a, umbrella, umbrella.msgs[0], ordered, statusSending, 10*time.Second); err != nil {
			return err
		}
		for range 3 {
			if err := g.send(ctx, a, umbrella, "order.updated", nil, []*endpoint{ordered}); err != nil {
				return err
			}
		}
	} else {
		g.skip("ordered endpoints: the endpoint was created without \"ordered\"; umbrella gets no messages")
	}
	for range 2 {
		if err := g.send(ctx, a, hooli, "user.created", nil, []*endpoint{hang}); err != nil {
			return err
		}
	}
	for _, msg := range initech.msgs {
		if err := g.waitStatus(ctx, a, initech, msg, ok, statusSuccess, 10*time.Second); err != nil {
			return err
		}
		if err := g.waitStatus(ctx, a, initech, msg, down, statusSending, 10*time.Second); err != nil {
			return err
		}
	}
	return g.rcv.waitFor(ctx, hang.path, len(hooli.msgs), 10*time.Second)
}

// hasAPIRole reports whether the build runs an API-only server on this store.
func (g *generator) hasAPIRole() bool {
	return g.o.store == upgradetest.StorePostgres && strings.Contains(g.help, "-role")
}

// queued is the third server, API only: messages that no worker has seen. It records the
// manifest and stops with SIGTERM.
func (g *generator) queued(ctx context.Context) error {
	srv, a, err := g.start("--role", "api")
	if err != nil {
		return err
	}
	g.m.Phases = append(g.m.Phases, "serve --role api: messages never attempted; manifest recorded; SIGTERM")
	err = g.queuedScenario(ctx, a)
	if err == nil {
		err = g.record(ctx, a)
	}
	if err != nil {
		_ = srv.stop(syscall.SIGKILL)
		return fmt.Errorf("%w\nthe build's log:\n%s", err, srv.log())
	}
	return srv.stop(syscall.SIGTERM)
}

func (g *generator) queuedScenario(ctx context.Context, a *api) error {
	vandelay, err := g.createApp(ctx, a, map[string]any{"name": "Vandelay Industries", "uid": "vandelay"})
	if err != nil {
		return err
	}
	ep, err := g.createEndpoint(ctx, a, vandelay, "vandelay", upgradetest.RoleQueued, map[string]any{"uid": "vandelay-queued", "channels": []string{"imports"}})
	if err != nil {
		return err
	}
	if err := g.customize(ctx, a, vandelay, ep, map[string]string{"X-Vandelay": "latex"}); err != nil {
		return err
	}
	for range 2 {
		if err := g.send(ctx, a, vandelay, "order.updated", []string{"imports"}, []*endpoint{ep}); err != nil {
			return err
		}
	}
	return nil
}

func lastElem(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}

// newPayload is a message's payload: distinct per message, with nesting, numbers and text that
// is not ASCII, so that a change of encoding shows.
func newPayload(fixture, appUID, eventType string, n int) map[string]any {
	return map[string]any{
		"invoice": fmt.Sprintf("in_%s_%d", appUID, n),
		"event":   eventType,
		"n":       n,
		"amount":  1999.5 + float64(n),
		"fixture": fixture,
		"note":    "Grüße, naïve café ✓",
		"lines":   []any{map[string]any{"sku": "A-1", "qty": 2}, map[string]any{"sku": "B-2", "qty": 1}},
		"flags":   map[string]any{"paid": true, "refund": nil},
	}
}

// statuses of a message's delivery to one endpoint (Svix's MessageStatus).
const (
	statusSuccess = 0
	statusPending = 1
	statusFail    = 2
	statusSending = 3 // failed, a retry scheduled
)
