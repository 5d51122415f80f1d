package hookd_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// logLine is one line of the text handler's output: its level, message and attributes.
type logLine struct {
	level, msg string
	attrs      map[string]string
}

var logAttr = regexp.MustCompile(`([a-z_]+)=("(?:[^"\\]|\\.)*"|\S*)`)

// parseLog reads the lines of a text handler's output.
func parseLog(text string) []logLine {
	var out []logLine
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		l := logLine{attrs: map[string]string{}}
		for _, m := range logAttr.FindAllStringSubmatch(line, -1) {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				v = strings.Trim(v, `"`)
			}
			l.attrs[m[1]] = v
		}
		l.level, l.msg = l.attrs["level"], l.attrs["msg"]
		out = append(out, l)
	}
	return out
}

// linesOf returns the lines whose message starts with msg and that carry every attribute in want.
func linesOf(lines []logLine, msg string, want map[string]string) []logLine {
	var out []logLine
next:
	for _, l := range lines {
		if !strings.HasPrefix(l.msg, msg) {
			continue
		}
		for k, v := range want {
			if l.attrs[k] != v {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// secretEndpoint adds an endpoint at path served by h, on the channel named for the path, whose URL carries a token in its query and
// whose headers carry a credential; both are made known to the log as secrets.
func (b *bundle) secretEndpoint(t *testing.T, path string, h http.Handler) *hookd.Endpoint {
	t.Helper()
	token, auth := "qtok_"+strings.TrimPrefix(path, "/")+"_8f3a", "Bearer hdr_"+strings.TrimPrefix(path, "/")+"_77c1"
	b.log.Secret(token, auth)
	ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{
		URL: b.recv.URL(path) + "?token=" + token, Headers: map[string]string{"X-Api-Key": auth},
		Channels: []string{strings.TrimPrefix(path, "/")},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.recv.Handle(path, h)
	secret, err := b.client.EndpointSecret(b.ctx, b.app.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(secret)
	if err := b.recv.SetSecret(path, secret); err != nil {
		t.Fatal(err)
	}
	return ep
}

func TestDeliveryLogStateChanges(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.CircuitThreshold = 2
	cfg.CircuitCooldown = 20 * time.Millisecond
	cfg.CircuitMaxCooldown = 40 * time.Millisecond
	b := setup(t, cfg)
	flaky := b.secretEndpoint(t, "/flaky", hookdtest.FailTimes(3, 503, "busy"))
	gone := b.secretEndpoint(t, "/gone", hookdtest.Gone("go away"))
	down := b.secretEndpoint(t, "/down", hookdtest.Status(500, "broken"))
	payloadSecret := "pay_5e1d_card_4242"
	b.log.Secret(payloadSecret)

	send := func(ch string) string {
		res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Channels: []string{ch}, Payload: map[string]any{"card": payloadSecret}})
		return res.Message.ID
	}
	flakyMsg, goneMsg, downMsg := send("flaky"), send("gone"), send("down")
	b.waitStatus(t, flakyMsg, flaky.ID, hookd.DeliveryDelivered)
	b.waitStatus(t, goneMsg, gone.ID, hookd.DeliveryCancelled)
	b.waitStatus(t, downMsg, down.ID, hookd.DeliveryFailed)
	// The lines are written just after the outcome is recorded (the circuit's when the worker
	// releases the endpoint): wait for the last of them.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l := parseLog(b.log.String())
		if len(linesOf(l, "hookd endpoint circuit closed", nil)) > 0 && len(linesOf(l, "hookd endpoint disabled", nil)) > 0 &&
			len(linesOf(l, "hookd delivery exhausted", nil)) > 0 {
			break
		}
	}

	lines := parseLog(b.log.String())
	ids := func(ep *hookd.Endpoint, msg string) map[string]string {
		return map[string]string{"app_id": b.app.ID, "endpoint_id": ep.ID, "msg_id": msg}
	}
	// Every failed attempt, at Debug, with its number, reason and duration.
	failed := linesOf(lines, "hookd attempt failed", ids(flaky, flakyMsg))
	if len(failed) != 3 {
		t.Fatalf("%d failed-attempt lines for the flaky endpoint, want 3; log:\n%s", len(failed), b.log.String())
	}
	for i, l := range failed {
		if l.level != "DEBUG" || l.attrs["attempt"] != strconv.Itoa(i+1) || l.attrs["reason"] != "HTTP 503" || l.attrs["status"] != "503" ||
			l.attrs["duration"] == "" || l.attrs["delivery_id"] == "" {
			t.Errorf("failed attempt line %d = %+v", i+1, l)
		}
	}
	// The circuit opens once and closes once.
	want := map[string]string{"app_id": b.app.ID, "endpoint_id": flaky.ID}
	if ls := linesOf(lines, "hookd endpoint circuit opened", want); len(ls) != 1 || ls[0].level != "WARN" || ls[0].attrs["cooldown"] != "20ms" {
		t.Errorf("circuit opened lines = %+v, want one at WARN with cooldown=20ms", ls)
	}
	if ls := linesOf(lines, "hookd endpoint circuit closed", want); len(ls) != 1 || ls[0].level != "INFO" {
		t.Errorf("circuit closed lines = %+v, want one at INFO", ls)
	}
	// A 410 disables the endpoint.
	if ls := linesOf(lines, "hookd endpoint disabled", ids(gone, goneMsg)); len(ls) != 1 || ls[0].level != "WARN" || ls[0].attrs["reason"] != "gone (HTTP 410)" {
		t.Errorf("endpoint disabled lines = %+v, want one at WARN for the 410", ls)
	}
	// A delivery whose schedule ran out.
	if ls := linesOf(lines, "hookd delivery exhausted", ids(down, downMsg)); len(ls) != 1 || ls[0].level != "WARN" || ls[0].attrs["attempts"] != "4" || ls[0].attrs["reason"] != "HTTP 500" {
		t.Errorf("delivery exhausted lines = %+v, want one at WARN after 4 attempts", ls)
	}
	if ls := linesOf(lines, "hookd endpoint disabled", map[string]string{"endpoint_id": down.ID}); len(ls) != 0 {
		t.Errorf("the failing endpoint was logged as disabled before its window: %+v", ls)
	}
	// No line names an endpoint's URL, in whole or in part.
	for _, l := range lines {
		for _, v := range l.attrs {
			if strings.Contains(v, "token=") || strings.Contains(v, b.recv.URL("")) {
				t.Errorf("a line holds an endpoint URL: %+v", l)
			}
		}
	}
}

// An endpoint that fails every attempt adds a bounded number of lines above Debug, however many
// attempts fail: one per change of state, none per attempt.
func TestDeliveryLogBoundedAtInfo(t *testing.T) {
	t.Parallel()
	const n = 60
	cfg := testConfig()
	cfg.CircuitThreshold = 3
	cfg.CircuitCooldown = time.Millisecond
	cfg.CircuitMaxCooldown = time.Millisecond
	cfg.RetrySchedule = []time.Duration{time.Hour} // no delivery runs out of its schedule here
	b := setup(t, cfg)
	ep := b.secretEndpoint(t, "/down", hookdtest.Status(503, "down"))
	for range n {
		b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Channels: []string{"down"}})
	}
	// Every first try fails: sent, or recorded as not sent while the circuit is open. Wait for
	// every failed attempt's line.
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines := parseLog(b.log.String())
		failed := linesOf(lines, "hookd attempt failed", map[string]string{"endpoint_id": ep.ID})
		if len(failed) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d failed-attempt lines, want %d", len(failed), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var above []logLine
	for _, l := range linesOf(parseLog(b.log.String()), "hookd ", map[string]string{"endpoint_id": ep.ID}) {
		if l.level != "DEBUG" {
			above = append(above, l)
		}
	}
	if len(above) != 1 || !strings.HasPrefix(above[0].msg, "hookd endpoint circuit opened") {
		t.Errorf("%d lines above Debug for %d failed attempts, want the circuit opening alone: %+v", len(above), n, above)
	}
}

// Start logs the workers of each lane, and Stop the attempts it drained and how long it took.
func TestDeliveryLogStartAndDrain(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Workers = map[hookd.Lane]int{hookd.LaneFirst: 7, hookd.LaneRetry: 3}
	b := setup(t, cfg)
	if err := b.client.Stop(b.ctx); err != nil {
		t.Fatal(err)
	}
	lines := parseLog(b.log.String())
	if ls := linesOf(lines, "hookd workers started", map[string]string{"workers_first": "7", "workers_retry": "3", "workers_manual": "10"}); len(ls) != 1 || ls[0].level != "INFO" {
		t.Errorf("workers started lines = %+v; log:\n%s", ls, b.log.String())
	}
	if ls := linesOf(lines, "hookd workers drained", map[string]string{"in_flight": "0"}); len(ls) != 1 || ls[0].level != "INFO" || ls[0].attrs["took"] == "" {
		t.Errorf("workers drained lines = %+v; log:\n%s", ls, b.log.String())
	}
}

// An endpoint whose deliveries fail with no success for DisableAfter is disabled when a delivery
// to it exhausts its schedule, and the line says why.
func TestDeliveryLogDisabledByFailingWindow(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.CircuitThreshold = -1
	cfg.DisableAfter = 50 * time.Millisecond
	cfg.RetrySchedule = []time.Duration{20 * time.Millisecond}
	b := setup(t, cfg)
	ep := b.secretEndpoint(t, "/down", hookdtest.Status(500, "broken"))
	first := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Channels: []string{"down"}}).Message.ID
	b.waitStatus(t, first, ep.ID, hookd.DeliveryFailed)
	time.Sleep(1100 * time.Millisecond) // let the worker's cached endpoint, read before the failures, expire
	msg := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Channels: []string{"down"}}).Message.ID
	b.waitStatus(t, msg, ep.ID, hookd.DeliveryFailed)
	// The worker logs the attempt's changes once its record has committed, which is when the
	// status shows: wait for the lines a moment.
	ids := map[string]string{"app_id": b.app.ID, "endpoint_id": ep.ID, "msg_id": msg}
	lines := parseLog(b.log.String())
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); lines = parseLog(b.log.String()) {
		if len(linesOf(lines, "hookd endpoint disabled", ids)) > 0 && len(linesOf(lines, "hookd delivery exhausted", ids)) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ls := linesOf(lines, "hookd endpoint disabled", ids); len(ls) != 1 || ls[0].level != "WARN" || ls[0].attrs["reason"] != "no successful delivery for 50ms" {
		t.Errorf("endpoint disabled lines = %+v, want one at WARN for the failing window", ls)
	}
	if ls := linesOf(lines, "hookd delivery exhausted", ids); len(ls) != 1 {
		t.Errorf("delivery exhausted lines = %+v, want one", ls)
	}
}

// A Stop whose context ends before the attempts in flight do says so at Warn, with how many.
func TestDeliveryLogDrainCutShort(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.secretEndpoint(t, "/hang", hookdtest.Hang())
	b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Channels: []string{"hang"}})
	if _, err := b.recv.Wait(b.ctx, "/hang", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Millisecond)
	defer cancel()
	if err := b.client.Stop(ctx); err == nil {
		t.Fatal("Stop returned nil with an attempt still hanging")
	}
	ls := linesOf(parseLog(b.log.String()), "hookd workers stopped before the attempts in flight ended", map[string]string{"in_flight": "1"})
	if len(ls) != 1 || ls[0].level != "WARN" || ls[0].attrs["waited"] == "" {
		t.Errorf("cut-short drain lines = %+v; log:\n%s", ls, b.log.String())
	}
}
