package hookd_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// waitAttempts waits until the attempt log of msg to ep has at least n rows, and returns them,
// oldest first.
func (b *bundle) waitAttempts(t *testing.T, msgID, epID string, n int) []hookd.Attempt {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		as := b.attempts(t, msgID, epID)
		if len(as) >= n {
			return as
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempt log of %s to %s has %d rows, want %d", msgID, epID, len(as), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRequests waits until n requests have arrived at path and returns them.
func (b *bundle) waitRequests(t *testing.T, path string, n int) []hookdtest.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	reqs, err := b.recv.Wait(ctx, path, n)
	if err != nil {
		t.Fatalf("%s: %d requests arrived, want %d: %v", path, len(reqs), n, err)
	}
	return reqs
}

// requestFor returns the request of path that carried message msgID.
func requestFor(t *testing.T, reqs []hookdtest.Request, msgID string) hookdtest.Request {
	t.Helper()
	for _, r := range reqs {
		if r.WebhookID == msgID {
			return r
		}
	}
	t.Fatalf("no request carried message %s", msgID)
	return hookdtest.Request{}
}

// sequence answers each request with the next handler of hs, and with the last one after that.
func sequence(hs ...http.Handler) http.Handler {
	var calls atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(calls.Add(1)) - 1
		hs[min(i, len(hs)-1)].ServeHTTP(w, r)
	})
}

// throttling answers code with a Retry-After header when retryAfter is not empty.
func throttling(code int, retryAfter string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	})
}

// A resend makes one more, manual attempt that shows in the attempt log but leaves the delivery's
// schedule as it was.
func TestResendDeliveredMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/ok", nil, nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)

	if err := b.client.Resend(b.ctx, "acme", res.Message.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	reqs := b.waitRequests(t, "/ok", 2)
	for i, r := range reqs {
		if r.WebhookID != res.Message.ID || !r.Verified {
			t.Errorf("request %d: webhook-id %q verified %t (%v); want %q, verified", i+1, r.WebhookID, r.Verified, r.VerifyErr, res.Message.ID)
		}
	}
	as := b.waitAttempts(t, res.Message.ID, ep.ID, 2)
	if len(as) != 2 {
		t.Fatalf("attempt log has %d rows, want 2", len(as))
	}
	if as[0].Trigger != hookd.TriggerScheduled || as[1].Trigger != hookd.TriggerManual || !as[1].Success || as[1].StatusCode != 200 {
		t.Errorf("attempts: %s then %s (success %t, status %d); want scheduled then a successful manual one",
			as[0].Trigger, as[1].Trigger, as[1].Success, as[1].StatusCode)
	}
	d, err := b.store.GetDeliveryFor(b.ctx, res.Message.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != hookd.DeliveryDelivered || d.Attempts != 1 || d.NextAttemptAt != nil {
		t.Errorf("delivery after resend: status %s, attempts %d, next %v; want delivered, 1, none", d.Status, d.Attempts, d.NextAttemptAt)
	}
}

func TestResendRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	off := b.endpoint(t, "/off", nil, nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, off.ID, hookd.DeliveryDelivered)
	if err := b.client.SetEndpointDisabled(b.ctx, "acme", off.ID, true, ""); err != nil {
		t.Fatal(err)
	}

	err := b.client.Resend(b.ctx, "acme", res.Message.ID, off.ID)
	if !errors.Is(err, hookd.ErrEndpointDisabled) {
		t.Errorf("resend to a disabled endpoint: err = %v, want ErrEndpointDisabled", err)
	}
	err = b.client.Resend(b.ctx, "acme", "msg_doesnotexist", off.ID)
	if !errors.Is(err, hookd.ErrNotFound) {
		t.Errorf("resend of an unknown message: err = %v, want ErrNotFound", err)
	}
	// Nothing was queued: no second request, no second attempt.
	time.Sleep(300 * time.Millisecond)
	if n := len(b.recv.Requests("/off")); n != 1 {
		t.Errorf("the disabled endpoint got %d requests, want 1", n)
	}
	if n := len(b.attempts(t, res.Message.ID, off.ID)); n != 1 {
		t.Errorf("attempt log has %d rows, want 1", n)
	}
}

// Resend to an endpoint that did not exist when the message was sent creates its delivery.
func TestResendToNewEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	if res.Deliveries != 0 {
		t.Fatalf("send with no endpoint made %d deliveries", res.Deliveries)
	}
	late := b.endpoint(t, "/late", nil, nil)
	if _, err := b.store.GetDeliveryFor(b.ctx, res.Message.ID, late.ID); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("delivery before resend: err = %v, want ErrNotFound", err)
	}
	if err := b.client.Resend(b.ctx, "acme", res.Message.ID, late.ID); err != nil {
		t.Fatal(err)
	}
	b.waitStatus(t, res.Message.ID, late.ID, hookd.DeliveryDelivered)
	reqs := b.recv.Requests("/late")
	if len(reqs) != 1 || reqs[0].WebhookID != res.Message.ID || !reqs[0].Verified {
		t.Fatalf("receiver got %+v; want one verified request for %s", reqs, res.Message.ID)
	}
	as := b.attempts(t, res.Message.ID, late.ID)
	if len(as) != 1 || as[0].Trigger != hookd.TriggerManual || !as[0].Success {
		t.Fatalf("attempt log: %+v; want one successful manual attempt", as)
	}
}

// Recover makes a manual attempt of each failed delivery created since a time.
func TestRecoverFailedDeliveries(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.RetrySchedule = []time.Duration{10 * time.Millisecond}
	b := setup(t, cfg)
	var healthy atomic.Bool
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if healthy.Load() {
			w.WriteHeader(200)
			return
		}
		w.WriteHeader(500)
	})
	ep := b.endpoint(t, "/down", h, nil)
	since := time.Now().Add(-time.Millisecond)
	var msgs []string
	for range 3 {
		msgs = append(msgs, b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"}).Message.ID)
	}
	for _, m := range msgs {
		b.waitStatus(t, m, ep.ID, hookd.DeliveryFailed)
	}
	after := time.Now().Add(time.Millisecond)
	healthy.Store(true)

	// While they are failed, a since after them finds none.
	n, err := b.client.Recover(b.ctx, "acme", ep.ID, after)
	if err != nil || n != 0 {
		t.Fatalf("recover since after the messages = %d, %v; want 0", n, err)
	}
	n, err = b.client.Recover(b.ctx, "acme", ep.ID, since)
	if err != nil || n != 3 {
		t.Fatalf("recover since before the messages = %d, %v; want 3", n, err)
	}
	for _, m := range msgs {
		d := b.waitStatus(t, m, ep.ID, hookd.DeliveryDelivered)
		if d.Attempts != 2 {
			t.Errorf("delivery of %s: %d attempts, want the 2 scheduled ones", m, d.Attempts)
		}
		as := b.attempts(t, m, ep.ID)
		if len(as) != 3 || as[2].Trigger != hookd.TriggerManual || !as[2].Success {
			t.Errorf("attempt log of %s: %+v; want 2 failures then a successful manual attempt", m, as)
		}
	}
	if got := len(b.recv.Requests("/down")); got != 9 {
		t.Errorf("receiver got %d requests, want 9 (3 × 2 failures + 3 recovered)", got)
	}
}

// throttleConfig has a floor well above the retry schedule, so each can be told apart.
func throttleConfig() *hookd.Config {
	cfg := testConfig()
	cfg.ThrottleFloor = 300 * time.Millisecond
	cfg.RetrySchedule = []time.Duration{50 * time.Millisecond}
	return cfg
}

// A 429 with Retry-After: 1 puts the retry a second out: past the 50 ms schedule and the 300 ms
// floor.
func TestThrottleRetryAfterBeatsFloorAndSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t, throttleConfig())
	ep := b.endpoint(t, "/429", sequence(throttling(http.StatusTooManyRequests, "1"), hookdtest.OK()), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	reqs := b.recv.Requests("/429")
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the 429 and its retry", len(reqs))
	}
	gap := reqs[1].At.Sub(reqs[0].At)
	if gap < time.Second {
		t.Errorf("the retry came %s after the 429, before its Retry-After of 1s", gap)
	}
	if gap > 2*time.Second && !raceEnabled {
		t.Errorf("the retry came %s after the 429, want about 1s", gap)
	}
	as := b.attempts(t, res.Message.ID, ep.ID)
	if len(as) != 2 || as[0].StatusCode != 429 || !as[1].Success {
		t.Fatalf("attempt log: %+v", as)
	}
}

// A 502 without Retry-After waits the throttle floor, not the shorter schedule.
func TestThrottleFloorWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := throttleConfig()
	b := setup(t, cfg)
	ep := b.endpoint(t, "/502", sequence(throttling(http.StatusBadGateway, ""), hookdtest.OK()), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	reqs := b.recv.Requests("/502")
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the 502 and its retry", len(reqs))
	}
	gap := reqs[1].At.Sub(reqs[0].At)
	if gap < cfg.ThrottleFloor {
		t.Errorf("the retry came %s after the 502, before the %s floor", gap, cfg.ThrottleFloor)
	}
	if gap > time.Second && !raceEnabled {
		t.Errorf("the retry came %s after the 502, want about %s", gap, cfg.ThrottleFloor)
	}
}

// A throttled endpoint gets no attempt at all until the window ends: a second message's first
// attempt waits as the throttled delivery's retry does.
func TestThrottleHoldsTheEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, throttleConfig())
	ep := b.endpoint(t, "/429", sequence(throttling(http.StatusTooManyRequests, "1"), hookdtest.OK()), nil)
	first := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	// The worker sets the endpoint's throttle just after it records the 429 (finish: rec.do,
	// then states.release); the pause covers that step, so the second message is sent into the
	// window rather than racing its start.
	b.waitAttempts(t, first.Message.ID, ep.ID, 1)
	time.Sleep(20 * time.Millisecond)
	second := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, first.Message.ID, ep.ID, hookd.DeliveryDelivered)
	b.waitStatus(t, second.Message.ID, ep.ID, hookd.DeliveryDelivered)

	reqs := b.recv.Requests("/429")
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (429, retry, second message)", len(reqs))
	}
	throttledAt := reqs[0].At
	got := requestFor(t, reqs, second.Message.ID)
	if gap := got.At.Sub(throttledAt); gap < time.Second {
		t.Errorf("the second message's first attempt came %s after the 429, inside the 1s throttle window", gap)
	} else if gap > 2500*time.Millisecond && !raceEnabled {
		t.Errorf("the second message's first attempt came %s after the 429, want soon after 1s", gap)
	}
	as := b.attempts(t, second.Message.ID, ep.ID)
	if len(as) != 1 || as[0].Number != 1 || !as[0].Success {
		t.Errorf("second message's attempt log: %+v; want one successful first attempt (a snooze is no attempt)", as)
	}
}

// arrivalSpan is the time from the first to the last request that arrived at path.
func arrivalSpan(reqs []hookdtest.Request) time.Duration {
	ats := make([]time.Time, len(reqs))
	for i, r := range reqs {
		ats[i] = r.At
	}
	slices.SortFunc(ats, func(a, b time.Time) int { return a.Compare(b) })
	return ats[len(ats)-1].Sub(ats[0])
}

// minRateSpan is the least arrival span of 10 messages at 5 per second. The token bucket of
// admission.go starts full (5 tokens) at the first admission t0 and refills at 5 per second,
// capped at 5, so by t0+s at most 5 + 5s admissions happened: the 10th needs s >= 1 s. The first
// request arrives at t0 plus the time to sign, dial and send it, so the span of arrivals is at
// least 1 s minus that; 200 ms of slack covers it (it is a few ms).
const minRateSpan = 800 * time.Millisecond

func TestRateLimitOfEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/rate", nil, &hookd.EndpointIn{RateLimit: 5})
	checkRate(t, b, "acme", ep, "/rate")
}

// An endpoint without a rate of its own takes its application's ThrottleRate.
func TestRateLimitFromApplicationThrottleRate(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	app, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Slow", UID: "slow", ThrottleRate: 5})
	if err != nil {
		t.Fatal(err)
	}
	b.app = app
	ep := b.endpoint(t, "/apprate", nil, nil)
	if ep.RateLimit != 0 {
		t.Fatalf("endpoint rate %d, want none of its own", ep.RateLimit)
	}
	checkRate(t, b, "slow", ep, "/apprate")
}

// checkRate sends 10 messages to app, whose only endpoint ep at path is limited to 5 a second.
func checkRate(t *testing.T, b *bundle, app string, ep *hookd.Endpoint, path string) {
	t.Helper()
	var msgs []string
	for range 10 {
		msgs = append(msgs, b.send(t, app, &hookd.MessageIn{EventType: "invoice.paid"}).Message.ID)
	}
	for _, m := range msgs {
		b.waitStatus(t, m, ep.ID, hookd.DeliveryDelivered)
	}
	reqs := b.recv.Requests(path)
	if len(reqs) != 10 {
		t.Fatalf("%d requests, want 10", len(reqs))
	}
	if span := arrivalSpan(reqs); span < minRateSpan {
		t.Errorf("10 messages at 5/s arrived within %s, want at least %s", span, minRateSpan)
	}
	// Snoozes are not attempts.
	for _, m := range msgs {
		if as := b.attempts(t, m, ep.ID); len(as) != 1 {
			t.Errorf("message %s: %d attempts, want 1", m, len(as))
		}
	}
}

// A hanging endpoint's attempts hold workers of their own lane only. First, its first attempts
// hang in 3 of the 4 first-lane workers and a healthy endpoint's first attempts go through the
// fourth. Then, once they time out, its retries pile up in the retry lane (1 worker: one hangs,
// two wait) while 3 more of its first attempts hang: were retries worked in the first lane, the
// 4 first-lane workers would all hang and the healthy endpoint would wait for a timeout.
func TestFirstAttemptsNotQueuedBehindRetries(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Delivery.Timeout = 2 * time.Second
	cfg.Workers = map[hookd.Lane]int{hookd.LaneFirst: 4, hookd.LaneRetry: 1}
	cfg.RetrySchedule = []time.Duration{10 * time.Millisecond}
	b := setup(t, cfg)
	hang := b.endpoint(t, "/hang", hookdtest.Hang(), &hookd.EndpointIn{EventTypes: []string{"a.event"}, MaxInFlight: 100})
	ok := b.endpoint(t, "/ok", nil, &hookd.EndpointIn{EventTypes: []string{"b.event"}})
	sendN := func(n int, eventType string) []string {
		var ids []string
		for range n {
			res := b.send(t, "acme", &hookd.MessageIn{EventType: eventType})
			if res.Deliveries != 1 {
				t.Fatalf("%s went to %d endpoints, want 1", eventType, res.Deliveries)
			}
			ids = append(ids, res.Message.ID)
		}
		return ids
	}
	// healthyBefore sends 5 messages to the healthy endpoint and checks that they are delivered
	// while every hanging attempt in flight still hangs: before deadline, when the oldest of them
	// times out, and with only the recorded hanging attempts still at recorded (a worker hanging
	// on the endpoint is freed only after its attempt is recorded, so a healthy delivery that
	// waited for one finds it recorded).
	healthyBefore := func(phase string, deadline time.Time, recorded int) {
		t.Helper()
		for _, m := range sendN(5, "b.event") {
			b.waitStatus(t, m, ok.ID, hookd.DeliveryDelivered)
		}
		if raceEnabled {
			return // the race detector may slow the healthy deliveries past the timeout
		}
		if late := time.Since(deadline); late > 0 {
			t.Errorf("%s: the healthy endpoint's deliveries ended %s after a hanging attempt timed out", phase, late)
		}
		if n := len(b.attempts(t, "", hang.ID)); n != recorded {
			t.Errorf("%s: %d attempts to the hanging endpoint recorded when the healthy ones ended, want %d: the healthy ones waited for a hanging one", phase, n, recorded)
		}
	}

	// Phase 1: first attempts hang.
	sendN(3, "a.event")
	hung := b.waitRequests(t, "/hang", 3)
	healthyBefore("first attempts hanging", hung[0].At.Add(cfg.Delivery.Timeout), 0)

	// Phase 2: the first attempts time out (3 recorded); a retry hangs in the retry lane's one
	// worker with two more waiting, and 3 new first attempts hang in the first lane.
	b.waitRequests(t, "/hang", 4)
	sendN(3, "a.event")
	hung = b.waitRequests(t, "/hang", 7)
	b.waitAttempts(t, "", hang.ID, 3)
	healthyBefore("retries piled up", hung[3].At.Add(cfg.Delivery.Timeout), 3)
	if n := len(b.recv.Requests("/ok")); n != 10 {
		t.Errorf("the healthy endpoint got %d requests, want 10", n)
	}
}

// Invalid input is refused with a *ValidationError naming the field, and nothing is written.
func TestValidationRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MaxPayload = 64
	b := setup(t, cfg)
	b.endpoint(t, "/ok", nil, nil)

	elevenChannels := make([]string, 11)
	for i := range elevenChannels {
		elevenChannels[i] = "ch" + string(rune('a'+i))
	}
	sends := []struct {
		name  string
		in    *hookd.MessageIn
		field string
	}{
		{"empty event type", &hookd.MessageIn{EventType: "", Payload: map[string]int{"n": 1}}, "eventType"},
		{"invalid JSON", &hookd.MessageIn{EventType: "invoice.paid", Payload: json.RawMessage("{")}, "payload"},
		{"payload over MaxPayload", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]string{"pad": strings.Repeat("x", 64)}}, "payload"},
		{"11 channels", &hookd.MessageIn{EventType: "invoice.paid", Channels: elevenChannels, Payload: map[string]int{"n": 1}}, "channels"},
	}
	for _, c := range sends {
		_, err := b.client.Send(b.ctx, "acme", c.in)
		checkInvalid(t, "send with "+c.name, err, c.field)
	}
	url := b.recv.URL("/new")
	eps := []struct {
		name  string
		in    *hookd.EndpointIn
		field string
	}{
		{"an ftp URL", &hookd.EndpointIn{URL: "ftp://x"}, "url"},
		{"a short secret", &hookd.EndpointIn{URL: url, Secret: "whsec_short"}, "secret"},
		{"an unknown scheme", &hookd.EndpointIn{URL: url, Scheme: "carrier-pigeon"}, "scheme"},
		// PostgreSQL's text cannot hold NUL: every store refuses it alike, as invalid input.
		{"a NUL in the description", &hookd.EndpointIn{URL: url, Description: "a\x00b"}, "description"},
		{"a NUL in a metadata value", &hookd.EndpointIn{URL: url, Metadata: map[string]string{"k": "\x00"}}, "metadata"},
		{"invalid UTF-8 in a metadata key", &hookd.EndpointIn{URL: url, Metadata: map[string]string{"\xff": "v"}}, "metadata"},
	}
	for _, c := range eps {
		_, err := b.client.CreateEndpoint(b.ctx, "acme", c.in)
		checkInvalid(t, "create endpoint with "+c.name, err, c.field)
	}
	_, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "x", Metadata: map[string]string{"": "v"}})
	checkInvalid(t, "create application with an empty metadata key", err, "metadata")
	_, err = b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "nul.test", Description: "\x00"})
	checkInvalid(t, "event type with a NUL in its description", err, "description")

	msgs, err := b.client.ListMessages(b.ctx, "acme", hookd.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs.Data) != 0 {
		t.Errorf("%d messages stored after refused sends, want 0", len(msgs.Data))
	}
	dls, err := b.client.ListDeliveries(b.ctx, "acme", hookd.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dls.Data) != 0 {
		t.Errorf("%d deliveries stored after refused sends, want 0", len(dls.Data))
	}
	list, err := b.client.ListEndpoints(b.ctx, "acme", hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 {
		t.Errorf("%d endpoints after refused creates, want the 1 made before", len(list.Data))
	}
	// A valid message still goes through, so the refusals above were about their input alone.
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: json.RawMessage(`{"n":1}`)})
	if res.Deliveries != 1 {
		t.Fatalf("valid send made %d deliveries, want 1", res.Deliveries)
	}
	if n := len(b.recv.Requests("/ok")); n > 1 {
		t.Errorf("receiver got %d requests, want at most the valid message's", n)
	}
}

func checkInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if !errors.Is(err, hookd.ErrInvalid) {
		t.Errorf("%s: err = %v, want ErrInvalid", what, err)
		return
	}
	var ve *hookd.ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: err %v is not a *ValidationError", what, err)
		return
	}
	if ve.Field != field {
		t.Errorf("%s: field %q (%s), want %q", what, ve.Field, ve.Reason, field)
	}
}
