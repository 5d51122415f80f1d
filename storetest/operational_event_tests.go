package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

var operationalEventTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		evs := []hookd.OperationalEvent{
			{ID: newID("evt_"), Type: hookd.OpEndpointDisabled, AppID: "app_1", EndpointID: "ep_1",
				Reason: "gone (HTTP 410) ✓", At: at(1)},
			{ID: newID("evt_"), Type: hookd.OpMessageAttemptExhausted, AppID: "app_1", EndpointID: "ep_1",
				MessageID: "msg_1", Reason: "schedule exhausted", At: at(2)},
			{ID: newID("evt_"), Type: hookd.OpEndpointCreated, At: at(3)},
		}
		f.write(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, evs[:2]) })
		f.write(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, evs[2:]) })
		f.write(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, nil) })
		page, err := f.store.ListOperationalEvents(f.ctx, hookd.ListOptions{})
		f.noErr(err)
		equal(t, "operational events", evs, page.Data)
		err = f.writeErr(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, evs[:1]) })
		f.isErr(err, hookd.ErrConflict)
	}},
}
