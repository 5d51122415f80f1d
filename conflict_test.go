package hookd_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hookd/hookd"
)

// TestConflictNamesTheKey: creating an application or an endpoint whose uid is taken is a
// *hookd.ConflictError naming the uid, with no SQL in its text.
func TestConflictNamesTheKey(t *testing.T) {
	t.Parallel()
	b := setup(t, nil) // application acme
	_, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Again", UID: "acme"})
	checkConflict(t, err, "application", "uid", "acme")
	if !strings.Contains(err.Error(), "GetOrCreateApplication") {
		t.Errorf("the error does not point to GetOrCreateApplication: %v", err)
	}
	in := &hookd.EndpointIn{UID: "invoices", URL: "https://acme.example/hooks"}
	if _, err := b.client.CreateEndpoint(b.ctx, "acme", in); err != nil {
		t.Fatal(err)
	}
	_, err = b.client.CreateEndpoint(b.ctx, "acme", in)
	checkConflict(t, err, "endpoint", "uid", "invoices")
	other, err := b.client.CreateEndpoint(b.ctx, "acme", &hookd.EndpointIn{URL: "https://acme.example/other"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.UpdateEndpoint(b.ctx, "acme", other.ID, in)
	checkConflict(t, err, "endpoint", "uid", "invoices")
}

func checkConflict(t *testing.T, err error, entity, field, value string) {
	t.Helper()
	var ce *hookd.ConflictError
	if !errors.Is(err, hookd.ErrConflict) || !errors.As(err, &ce) {
		t.Fatalf("want a *hookd.ConflictError, got %T: %v", err, err)
	}
	if ce.Entity != entity || ce.Field != field || ce.Value != value {
		t.Fatalf("conflict names %s %s %q, want %s %s %q", ce.Entity, ce.Field, ce.Value, entity, field, value)
	}
	if strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "constraint") {
		t.Errorf("the error's text holds the store's SQL error: %v", err)
	}
}

// TestGetOrCreateApplication: the first call creates, later ones (and racing ones) return that
// application as it is.
func TestGetOrCreateApplication(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	in := &hookd.ApplicationIn{Name: "Globex", UID: "globex"}
	first, err := b.client.GetOrCreateApplication(b.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.client.GetOrCreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Renamed", UID: "globex"})
	if err != nil || again.ID != first.ID || again.Name != "Globex" {
		t.Fatalf("second call: %+v, %v; want %s named Globex", again, err, first.ID)
	}

	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, len(ids))
	for i := range ids {
		wg.Go(func() {
			a, err := b.client.GetOrCreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Initech", UID: "initech"})
			if a != nil {
				ids[i] = a.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("racing calls: ids %v, errors %v", ids, errs)
		}
	}

	_, err = b.client.GetOrCreateApplication(b.ctx, &hookd.ApplicationIn{Name: "No uid"})
	var ve *hookd.ValidationError
	if !errors.As(err, &ve) || ve.Field != "uid" {
		t.Fatalf("without a uid: %v, want a *hookd.ValidationError naming uid", err)
	}
}
