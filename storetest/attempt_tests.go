package storetest

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

var attemptTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		d := f.newDelivery(msg, ep.ID)
		failed := attempt(d, 1, at(3), func(a *hookd.Attempt) {
			a.StatusCode, a.Error, a.Response = 0, "dial tcp: i/o timeout", ""
			a.Duration = 15*time.Second + 7*time.Microsecond
		})
		manual := attempt(d, 2, at(4), succeeded, func(a *hookd.Attempt) {
			a.Trigger, a.Response = hookd.TriggerManual, "{\"ok\":true}\n\x00bytes ü"
			a.RequestHeaders = hookd.AttemptHeaders{Header: http.Header{
				"Webhook-Signature": {"v1,abc= v1,def="}, "X-Api-Key": {hookd.Redacted}, "Accept": {"a", "b ü"}}}
			a.ResponseHeaders = hookd.AttemptHeaders{Header: http.Header{"Content-Type": {"application/json"}}, Omitted: 3}
		})
		f.record(hookd.AttemptRecord{Attempt: failed, Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(8))},
			hookd.AttemptRecord{Attempt: manual, Status: hookd.DeliveryDelivered})
		for _, a := range []hookd.Attempt{failed, manual} {
			got, err := f.store.GetAttempt(f.ctx, a.ID)
			f.noErr(err)
			equal(t, "attempt", a, *got)
		}
		_, err := f.store.GetAttempt(f.ctx, "atmpt_missing")
		f.isErr(err, hookd.ErrNotFound)
		f.write(func(tx hookd.Tx) error { return tx.RecordAttempts(f.ctx, nil) })
	}},
	{"HealthArithmetic", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		d := f.newDelivery(msg, ep.ID)

		// Failure: HTTP 500.
		a1 := attempt(d, 1, at(10))
		f.record(hookd.AttemptRecord{Attempt: a1, Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(15))})
		wantEp := ep
		wantEp.LastAttemptAt, wantEp.LastStatus, wantEp.LastError = ptr(at(10)), 500, "HTTP 500"
		wantEp.FailingSince, wantEp.ConsecutiveFailures = ptr(at(10)), 1
		equal(t, "endpoint after a failure", wantEp, *f.getEndpoint(ep.ID))
		wantD := d
		wantD.Attempts, wantD.NextAttemptAt, wantD.LastError, wantD.UpdatedAt = 1, ptr(at(15)), "HTTP 500", at(10)
		equal(t, "delivery after a failure", wantD, *f.getDelivery(d.ID))

		// Failure: no response. FailingSince keeps the first failure.
		a2 := attempt(d, 2, at(20), func(a *hookd.Attempt) { a.StatusCode, a.Error = 0, "timeout" })
		f.record(hookd.AttemptRecord{Attempt: a2, Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(320))})
		wantEp.LastAttemptAt, wantEp.LastStatus, wantEp.LastError, wantEp.ConsecutiveFailures = ptr(at(20)), 0, "timeout", 2
		equal(t, "endpoint after two failures", wantEp, *f.getEndpoint(ep.ID))
		wantD.Attempts, wantD.NextAttemptAt, wantD.LastError, wantD.UpdatedAt = 2, ptr(at(320)), "timeout", at(20)
		equal(t, "delivery after two failures", wantD, *f.getDelivery(d.ID))

		// Success.
		a3 := attempt(d, 3, at(320), succeeded)
		f.record(hookd.AttemptRecord{Attempt: a3, Status: hookd.DeliveryDelivered})
		wantEp.LastAttemptAt, wantEp.LastStatus, wantEp.LastError = ptr(at(320)), 200, ""
		wantEp.LastSuccessAt, wantEp.FailingSince, wantEp.ConsecutiveFailures = ptr(at(320)), nil, 0
		equal(t, "endpoint after a success", wantEp, *f.getEndpoint(ep.ID))
		wantD.Status, wantD.Attempts, wantD.NextAttemptAt, wantD.LastError, wantD.UpdatedAt =
			hookd.DeliveryDelivered, 3, nil, "", at(320)
		equal(t, "delivery after a success", wantD, *f.getDelivery(d.ID))

		// A new failure starts a new streak.
		a4 := attempt(d, 4, at(400), func(a *hookd.Attempt) { a.Trigger = hookd.TriggerManual })
		f.record(hookd.AttemptRecord{Attempt: a4, Status: hookd.DeliveryFailed})
		wantEp.LastAttemptAt, wantEp.LastStatus, wantEp.LastError = ptr(at(400)), 500, "HTTP 500"
		wantEp.FailingSince, wantEp.ConsecutiveFailures = ptr(at(400)), 1
		equal(t, "endpoint after a new failure", wantEp, *f.getEndpoint(ep.ID))
	}},
	{"BatchInOrder", func(t *testing.T, f *fixture) {
		app := f.newApp()
		e1, e2 := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		var recs []hookd.AttemptRecord
		var ds []hookd.Delivery
		for i := range 5 {
			msg := f.newMessage(app.ID)
			d1, d2 := f.newDelivery(msg, e1.ID), f.newDelivery(msg, e2.ID)
			ds = append(ds, d1, d2)
			recs = append(recs,
				hookd.AttemptRecord{Attempt: attempt(d1, 1, at(10+i)), Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(100))},
				hookd.AttemptRecord{Attempt: attempt(d2, 1, at(10+i), succeeded), Status: hookd.DeliveryDelivered})
		}
		// The second record of d1 comes later in the batch: its state wins.
		recs = append(recs, hookd.AttemptRecord{Attempt: attempt(ds[0], 2, at(20), succeeded), Status: hookd.DeliveryDelivered})
		f.record(recs...)
		got1 := f.getEndpoint(e1.ID)
		if got1.ConsecutiveFailures != 0 || got1.LastStatus != 200 || got1.FailingSince != nil {
			t.Fatalf("endpoint 1 after 5 failures then a success: %+v", got1)
		}
		equal(t, "endpoint 1 last success", ptr(at(20)), got1.LastSuccessAt)
		got2 := f.getEndpoint(e2.ID)
		if got2.ConsecutiveFailures != 0 || got2.LastStatus != 200 {
			t.Fatalf("endpoint 2 after 5 successes: %+v", got2)
		}
		equal(t, "endpoint 2 last attempt", ptr(at(14)), got2.LastAttemptAt)
		first := f.getDelivery(ds[0].ID)
		if first.Status != hookd.DeliveryDelivered || first.Attempts != 2 {
			t.Fatalf("delivery with two records: %+v", first)
		}
		page, err := f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID, ListOptions: hookd.ListOptions{Limit: 250}})
		f.noErr(err)
		if len(page.Data) != len(recs) {
			t.Fatalf("want %d attempts, got %d", len(recs), len(page.Data))
		}
	}},
	{"StreaksWithinABatch", func(t *testing.T, f *fixture) {
		app := f.newApp()
		failing, recovering := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		d1, d2 := f.newDelivery(msg, failing.ID), f.newDelivery(msg, recovering.ID)
		f.record(
			hookd.AttemptRecord{Attempt: attempt(d1, 1, at(10)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d2, 1, at(10)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d1, 2, at(20)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d2, 2, at(20), succeeded), Status: hookd.DeliveryDelivered},
			hookd.AttemptRecord{Attempt: attempt(d1, 3, at(30)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d2, 3, at(30)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d2, 4, at(40)), Status: hookd.DeliveryPending},
		)
		want := failing
		want.LastAttemptAt, want.LastStatus, want.LastError = ptr(at(30)), 500, "HTTP 500"
		want.FailingSince, want.ConsecutiveFailures = ptr(at(10)), 3
		equal(t, "three failures in one batch", want, *f.getEndpoint(failing.ID))
		want = recovering
		want.LastAttemptAt, want.LastStatus, want.LastError, want.LastSuccessAt = ptr(at(40)), 500, "HTTP 500", ptr(at(20))
		want.FailingSince, want.ConsecutiveFailures = ptr(at(30)), 2
		equal(t, "failure, success, two failures in one batch", want, *f.getEndpoint(recovering.ID))
	}},
	{"LargeBatch", func(t *testing.T, f *fixture) {
		app := f.newApp()
		eps := []hookd.Endpoint{f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(app.ID)}
		var ds []hookd.Delivery
		for range 50 {
			msg := f.newMessage(app.ID)
			for _, ep := range eps {
				ds = append(ds, f.newDelivery(msg, ep.ID))
			}
		}
		// 301 records: every delivery twice (a failure, then a success), then one more failure.
		var recs []hookd.AttemptRecord
		for n := 1; n <= 2; n++ {
			for _, d := range ds {
				if n == 1 {
					recs = append(recs, hookd.AttemptRecord{Attempt: attempt(d, 1, at(10)), Status: hookd.DeliveryPending})
				} else {
					recs = append(recs, hookd.AttemptRecord{Attempt: attempt(d, 2, at(20), succeeded), Status: hookd.DeliveryDelivered})
				}
			}
		}
		recs = append(recs, hookd.AttemptRecord{Attempt: attempt(ds[0], 3, at(30)), Status: hookd.DeliveryPending})
		f.record(recs...)
		for i, d := range ds {
			got := f.getDelivery(d.ID)
			want := hookd.DeliveryDelivered
			if i == 0 {
				want = hookd.DeliveryPending
			}
			wantAttempts := 2
			if i == 0 {
				wantAttempts = 3
			}
			if got.Attempts != wantAttempts || got.Status != want {
				t.Fatalf("delivery %d: attempts %d, status %s", i, got.Attempts, got.Status)
			}
		}
		for i, ep := range eps {
			got := f.getEndpoint(ep.ID)
			failures := 0
			if i == 0 {
				failures = 1
			}
			if got.ConsecutiveFailures != failures || !got.LastSuccessAt.Equal(at(20)) {
				t.Fatalf("endpoint %d: %d failures, last success %v", i, got.ConsecutiveFailures, got.LastSuccessAt)
			}
		}
		page, err := f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID, ListOptions: hookd.ListOptions{Limit: 250}})
		f.noErr(err)
		rest, err := f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID, ListOptions: hookd.ListOptions{Limit: 250, Iterator: page.Iterator}})
		f.noErr(err)
		if n := len(page.Data) + len(rest.Data); n != len(recs) || !rest.Done {
			t.Fatalf("want %d attempts, listed %d", len(recs), n)
		}
	}},
	{"AttemptsNeverDecrease", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		d := f.newDelivery(f.newMessage(app.ID), ep.ID)
		f.record(hookd.AttemptRecord{Attempt: attempt(d, 3, at(10)), Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(99))})
		f.record(hookd.AttemptRecord{Attempt: attempt(d, 2, at(11), succeeded), Status: hookd.DeliveryDelivered})
		got := f.getDelivery(d.ID)
		if got.Attempts != 3 || got.Status != hookd.DeliveryDelivered || got.NextAttemptAt != nil || got.LastError != "" {
			t.Fatalf("delivery after attempts 3 then 2: %+v", got)
		}
		// The same within one batch.
		d2 := f.newDelivery(f.newMessage(app.ID), ep.ID)
		f.record(hookd.AttemptRecord{Attempt: attempt(d2, 5, at(10)), Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(99))},
			hookd.AttemptRecord{Attempt: attempt(d2, 1, at(11), succeeded), Status: hookd.DeliveryDelivered})
		got = f.getDelivery(d2.ID)
		if got.Attempts != 5 || got.Status != hookd.DeliveryDelivered || got.UpdatedAt.Equal(at(10)) {
			t.Fatalf("delivery after attempts 5 then 1 in one batch: %+v", got)
		}
	}},
	{"MissingDelivery", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		ghost := hookd.Delivery{ID: "dlv_missing", MessageID: msg.ID, EndpointID: ep.ID, AppID: app.ID}
		err := f.writeErr(func(tx hookd.Tx) error {
			return tx.RecordAttempts(f.ctx, []hookd.AttemptRecord{{Attempt: attempt(ghost, 1, at(5)), Status: hookd.DeliveryPending}})
		})
		f.isErr(err, hookd.ErrNotFound)
		if ep := f.getEndpoint(ep.ID); ep.ConsecutiveFailures != 0 || ep.LastAttemptAt != nil {
			t.Fatalf("a failed RecordAttempts changed the endpoint: %+v", ep)
		}
	}},
	{"AttemptsPerHour", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		e1, e2, eo := f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(other.ID)
		msg, mo := f.newMessage(app.ID), f.newMessage(other.ID)
		d1, d2, do := f.newDelivery(msg, e1.ID), f.newDelivery(msg, e2.ID), f.newDelivery(mo, eo.ID)
		h0 := base.Truncate(time.Hour)
		f.record(
			hookd.AttemptRecord{Attempt: attempt(d1, 1, h0.Add(-time.Minute)), Status: hookd.DeliveryPending}, // before Since
			hookd.AttemptRecord{Attempt: attempt(d1, 2, h0.Add(time.Minute)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d1, 3, h0.Add(59*time.Minute), succeeded), Status: hookd.DeliveryDelivered},
			hookd.AttemptRecord{Attempt: attempt(d2, 1, h0.Add(61*time.Minute), succeeded), Status: hookd.DeliveryDelivered},
			hookd.AttemptRecord{Attempt: attempt(do, 1, h0.Add(time.Minute)), Status: hookd.DeliveryPending},
		)
		got, err := f.store.AttemptsPerHour(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, Since: h0})
		f.noErr(err)
		equal(t, "application", []hookd.HourCount{{Hour: h0, Succeeded: 1, Failed: 1}, {Hour: h0.Add(time.Hour), Succeeded: 1}}, got)
		got, err = f.store.AttemptsPerHour(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, EndpointID: e1.ID, Since: h0.Add(-time.Hour)})
		f.noErr(err)
		equal(t, "endpoint", []hookd.HourCount{{Hour: h0.Add(-time.Hour), Failed: 1}, {Hour: h0, Succeeded: 1, Failed: 1}}, got)
		got, err = f.store.AttemptsPerHour(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, Since: h0.Add(-time.Hour), FromID: "atmpt_~"})
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("attempts before FromID counted: %+v", got)
		}
		got, err = f.store.AttemptsPerHour(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, EndpointID: eo.ID, Since: h0.Add(-time.Hour)})
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("another application's endpoint counted: %+v", got)
		}
	}},
	{"AttemptsByEndpoint", func(t *testing.T, f *fixture) {
		ec, ok := f.store.(hookd.EndpointAttemptCounter)
		if !ok {
			t.Skip("the store is not a hookd.EndpointAttemptCounter")
		}
		app, other := f.newApp(), f.newApp()
		e1, e2, e3, eo := f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(other.ID)
		msg, mo := f.newMessage(app.ID), f.newMessage(other.ID)
		d1, d2, d3, do := f.newDelivery(msg, e1.ID), f.newDelivery(msg, e2.ID), f.newDelivery(msg, e3.ID), f.newDelivery(mo, eo.ID)
		h0 := base.Truncate(time.Hour)
		f.record(
			hookd.AttemptRecord{Attempt: attempt(d1, 1, h0.Add(-time.Minute)), Status: hookd.DeliveryPending}, // before Since
			hookd.AttemptRecord{Attempt: attempt(d1, 2, h0.Add(time.Minute)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(d1, 3, h0.Add(2*time.Hour), succeeded), Status: hookd.DeliveryDelivered},
			hookd.AttemptRecord{Attempt: attempt(d2, 1, h0.Add(time.Minute), succeeded), Status: hookd.DeliveryDelivered},
			hookd.AttemptRecord{Attempt: attempt(d3, 1, h0.Add(time.Minute)), Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: attempt(do, 1, h0.Add(time.Minute)), Status: hookd.DeliveryPending},
		)
		got, err := ec.AttemptsByEndpoint(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, Since: h0}, []string{e1.ID, e2.ID, eo.ID})
		f.noErr(err)
		equal(t, "counts", map[string]hookd.AttemptCount{e1.ID: {Succeeded: 1, Failed: 1}, e2.ID: {Succeeded: 1}}, got)
		got, err = ec.AttemptsByEndpoint(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, Since: h0.Add(-time.Hour), FromID: "atmpt_~"}, []string{e1.ID})
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("attempts before FromID counted: %+v", got)
		}
		got, err = ec.AttemptsByEndpoint(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, Since: h0}, nil)
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("no endpoint asked for, yet counted: %+v", got)
		}
		// More ids than SQLite takes parameters in one statement (32,766).
		got, err = ec.AttemptsByEndpoint(f.ctx, hookd.AttemptStatsFilter{AppID: app.ID, Since: h0}, append(manyIDs("ep_", 40_000), e2.ID))
		f.noErr(err)
		equal(t, "counts of 40,001 endpoints", map[string]hookd.AttemptCount{e2.ID: {Succeeded: 1}}, got)
	}},
	{"Filters", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		e1, e2 := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		eo := f.newEndpoint(other.ID)
		m1 := f.newMessage(app.ID, func(m *hookd.Message) { m.EventType, m.Channels = "invoice.paid", []string{"a", "b"} })
		m2 := f.newMessage(app.ID, func(m *hookd.Message) { m.EventType, m.Channels = "user.created", []string{"b", "a:1"} })
		mo := f.newMessage(other.ID, func(m *hookd.Message) { m.EventType, m.Channels = "invoice.paid", []string{"a"} })
		d11, d12 := f.newDelivery(m1, e1.ID), f.newDelivery(m1, e2.ID)
		d21, do := f.newDelivery(m2, e1.ID), f.newDelivery(mo, eo.ID)
		a1 := attempt(d11, 1, at(10))
		a2 := attempt(d12, 1, at(11), succeeded)
		ao := attempt(do, 1, at(12))
		a3 := attempt(d11, 2, at(20), succeeded)
		a4 := attempt(d21, 1, at(30))
		var recs []hookd.AttemptRecord
		for _, a := range []hookd.Attempt{a1, a2, ao, a3, a4} {
			recs = append(recs, hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryPending})
		}
		f.record(recs...)
		cases := []struct {
			name   string
			filter hookd.AttemptFilter
			want   []hookd.Attempt
		}{
			{"application", hookd.AttemptFilter{AppID: app.ID}, []hookd.Attempt{a4, a3, a2, a1}},
			{"message", hookd.AttemptFilter{AppID: app.ID, MessageID: m1.ID}, []hookd.Attempt{a3, a2, a1}},
			{"endpoint", hookd.AttemptFilter{AppID: app.ID, EndpointID: e1.ID}, []hookd.Attempt{a4, a3, a1}},
			{"delivery", hookd.AttemptFilter{AppID: app.ID, DeliveryID: d11.ID}, []hookd.Attempt{a3, a1}},
			{"successes", hookd.AttemptFilter{AppID: app.ID, Success: ptr(true)}, []hookd.Attempt{a3, a2}},
			{"failures", hookd.AttemptFilter{AppID: app.ID, Success: ptr(false)}, []hookd.Attempt{a4, a1}},
			{"event type", hookd.AttemptFilter{AppID: app.ID, EventTypes: []string{"user.created"}}, []hookd.Attempt{a4}},
			{"event types", hookd.AttemptFilter{AppID: app.ID, EventTypes: []string{"invoice.paid", "user.created"}}, []hookd.Attempt{a4, a3, a2, a1}},
			{"channel", hookd.AttemptFilter{AppID: app.ID, Channel: "a"}, []hookd.Attempt{a3, a2, a1}},
			{"after, inclusive", hookd.AttemptFilter{AppID: app.ID, After: ptr(at(20))}, []hookd.Attempt{a4, a3}},
			{"before, exclusive", hookd.AttemptFilter{AppID: app.ID, Before: ptr(at(20))}, []hookd.Attempt{a2, a1}},
			{"all at once", hookd.AttemptFilter{AppID: app.ID, MessageID: m1.ID, EndpointID: e1.ID, DeliveryID: d11.ID,
				Success: ptr(false), EventTypes: []string{"invoice.paid"}, Channel: "b", After: ptr(at(10)), Before: ptr(at(11))},
				[]hookd.Attempt{a1}},
			{"nothing", hookd.AttemptFilter{AppID: app.ID, Channel: "c"}, nil},
			// More event types than SQLite takes parameters in one statement (32,766).
			{"40,000 event types", hookd.AttemptFilter{AppID: app.ID, EventTypes: append(manyIDs("type.", 40_000), "user.created")}, []hookd.Attempt{a4}},
		}
		for _, c := range cases {
			page, err := f.store.ListAttempts(f.ctx, c.filter)
			f.noErr(err)
			if len(c.want) == 0 {
				if len(page.Data) != 0 {
					t.Fatalf("%s: want no attempts, got %d", c.name, len(page.Data))
				}
				continue
			}
			equal(t, c.name, c.want, page.Data)
		}
	}},
}
