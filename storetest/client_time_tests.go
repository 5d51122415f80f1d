package storetest

import (
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// clientTimeTests run a hookd.Client over the store with a clock that has nanoseconds: what a
// create or an update returns is what a later read returns, to the nanosecond.
var clientTimeTests = []test{
	{"CreateAndUpdateReturnWhatReadsReturn", func(t *testing.T, f *fixture) {
		clock := time.Date(2026, 11, 30, 10, 0, 0, 123456789, zone)
		c, err := hookd.NewClient(f.store, &hookd.Config{Now: func() time.Time { return clock }})
		f.noErr(err)
		same := func(what string, made, read time.Time) {
			t.Helper()
			if !made.Equal(read) || made.Nanosecond() != read.Nanosecond() {
				t.Errorf("%s: returned %s, read back %s", what, made.Format(time.RFC3339Nano), read.Format(time.RFC3339Nano))
			}
		}

		app, err := c.CreateApplication(f.ctx, &hookd.ApplicationIn{Name: "Times", UID: "times"})
		f.noErr(err)
		got, err := c.GetApplication(f.ctx, app.ID)
		f.noErr(err)
		same("application createdAt", app.CreatedAt, got.CreatedAt)
		same("application updatedAt", app.UpdatedAt, got.UpdatedAt)

		clock = clock.Add(time.Second + 987)
		app, err = c.UpdateApplication(f.ctx, app.ID, &hookd.ApplicationIn{Name: "Times 2", UID: "times"})
		f.noErr(err)
		got, err = c.GetApplication(f.ctx, app.ID)
		f.noErr(err)
		same("updated application updatedAt", app.UpdatedAt, got.UpdatedAt)

		ep, err := c.CreateEndpoint(f.ctx, app.ID, &hookd.EndpointIn{URL: "https://example.com/hook"})
		f.noErr(err)
		gotEp, err := c.GetEndpoint(f.ctx, app.ID, ep.ID)
		f.noErr(err)
		same("endpoint createdAt", ep.CreatedAt, gotEp.CreatedAt)
		same("endpoint updatedAt", ep.UpdatedAt, gotEp.UpdatedAt)

		clock = clock.Add(time.Second + 321)
		ep, err = c.UpdateEndpoint(f.ctx, app.ID, ep.ID, &hookd.EndpointIn{URL: "https://example.com/other"})
		f.noErr(err)
		gotEp, err = c.GetEndpoint(f.ctx, app.ID, ep.ID)
		f.noErr(err)
		same("updated endpoint updatedAt", ep.UpdatedAt, gotEp.UpdatedAt)

		et, err := c.UpsertEventType(f.ctx, &hookd.EventType{Name: "invoice.paid"})
		f.noErr(err)
		gotEt, err := c.GetEventType(f.ctx, et.Name)
		f.noErr(err)
		same("event type createdAt", et.CreatedAt, gotEt.CreatedAt)
		same("event type updatedAt", et.UpdatedAt, gotEt.UpdatedAt)

		res, err := c.Send(f.ctx, app.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"n": 1}})
		f.noErr(err)
		msg, err := c.GetMessage(f.ctx, app.ID, res.Message.ID)
		f.noErr(err)
		same("message createdAt", res.Message.CreatedAt, msg.CreatedAt)
	}},
}
