package hookd_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/hookd/hookd"
)

// notObjects are payloads the API refuses with a 422: the library refuses them too.
var notObjects = []struct {
	name    string
	payload any
}{
	{"raw number", json.RawMessage(`42`)},
	{"raw string", json.RawMessage(`"str"`)},
	{"raw array", json.RawMessage(` [1,2]`)},
	{"raw null", json.RawMessage(`null`)},
	{"bytes true", []byte(`true`)},
	{"number", 42},
	{"string", "str"},
	{"slice", []int{1, 2}},
	{"nil map", map[string]any(nil)},
}

func isPayloadError(t *testing.T, how string, err error) {
	t.Helper()
	var ve *hookd.ValidationError
	if !errors.As(err, &ve) || ve.Field != "payload" || !errors.Is(err, hookd.ErrInvalid) {
		t.Fatalf("%s: %v, want a *hookd.ValidationError naming payload", how, err)
	}
}

// TestPayloadMustBeObject: Send, SendTx, sends batched together and SendToEndpoint refuse a
// payload that is not a JSON object, write nothing for it, and take an object as given.
func TestPayloadMustBeObject(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep, err := b.client.CreateEndpoint(b.ctx, "acme", &hookd.EndpointIn{URL: "https://acme.example/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range notObjects {
		_, err := b.client.Send(b.ctx, "acme", &hookd.MessageIn{EventType: "a.b", Payload: tc.payload})
		isPayloadError(t, "Send "+tc.name, err)

		tx, err := b.store.DB().BeginTx(b.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.client.SendTx(b.ctx, tx, "acme", &hookd.MessageIn{EventType: "a.b", Payload: tc.payload})
		isPayloadError(t, "SendTx "+tc.name, err)
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}

		_, err = b.client.SendToEndpoint(b.ctx, "acme", ep.ID, &hookd.MessageIn{EventType: "a.b", Payload: tc.payload})
		isPayloadError(t, "SendToEndpoint "+tc.name, err)
	}

	// Concurrent sends share batches: the refused ones fail alone, the others are written.
	var wg sync.WaitGroup
	errs := make([]error, 2*len(notObjects))
	for i := range errs {
		wg.Go(func() {
			in := &hookd.MessageIn{EventType: "a.b", Payload: json.RawMessage(" {\"n\":1}")}
			if i%2 == 1 {
				in.Payload = notObjects[i/2].payload
			}
			_, errs[i] = b.client.Send(b.ctx, "acme", in)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 1 {
			isPayloadError(t, "batched Send "+notObjects[i/2].name, err)
		} else if err != nil {
			t.Fatalf("batched Send of an object: %v", err)
		}
	}
	page, err := b.client.ListMessages(b.ctx, "acme", hookd.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != len(notObjects) {
		t.Fatalf("%d messages written, want the %d objects alone", len(page.Data), len(notObjects))
	}
	for _, m := range page.Data {
		if string(m.Payload) != " {\"n\":1}" {
			t.Fatalf("payload %q, want the bytes sent", m.Payload)
		}
	}
}
