package hookd_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestSendHonoursDeadlineBehindOpenTx: while the app holds a transaction open on the SQLite
// store's DB() (which holds the store's one write connection), Send and the client's other
// writes give up at their context's deadline with hookd.ErrWriterBusy, saying what holds the
// connection; a Send without a deadline waits, and is written once the transaction commits.
func TestSendHonoursDeadlineBehindOpenTx(t *testing.T) {
	t.Parallel()
	b := setup(t, nil) // application acme
	msg := func(n int) *hookd.MessageIn {
		return &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": n}}
	}
	tx, err := b.store.DB().BeginTx(b.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(b.ctx, `CREATE TABLE orders (id TEXT)`); err != nil {
		t.Fatal(err)
	}

	createApp := func(how string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.ctx, 200*time.Millisecond)
		defer cancel()
		_, err := b.client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Globex", UID: "globex"})
		if !errors.Is(err, hookd.ErrWriterBusy) || !strings.Contains(err.Error(), "DB()") || !strings.Contains(err.Error(), "SendTx") {
			t.Errorf("CreateApplication %s: %v, want hookd.ErrWriterBusy naming DB() and SendTx", how, err)
		}
	}
	createApp("alone")

	// One Send leads and waits for the connection; the others wait behind it. All have a
	// deadline but the last, which waits on.
	const n = 4
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(b.ctx, 200*time.Millisecond)
			defer cancel()
			_, errs[i] = b.client.Send(ctx, "acme", msg(i))
		})
	}
	patient := make(chan error, 1)
	go func() {
		_, err := b.client.Send(b.ctx, "acme", msg(n))
		patient <- err
	}()
	timedOut := make(chan struct{})
	go func() { wg.Wait(); close(timedOut) }()
	select {
	case <-timedOut:
	case <-time.After(20 * time.Second):
		t.Fatal("Sends with a deadline of 200 ms still wait after 20 s")
	}
	for i, err := range errs[:n] {
		if !errors.Is(err, hookd.ErrWriterBusy) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "SendTx") {
			t.Errorf("Send %d: %v, want hookd.ErrWriterBusy and context.DeadlineExceeded, naming SendTx", i, err)
		}
	}
	createApp("behind a Send")
	select {
	case err := <-patient:
		t.Fatalf("the Send without a deadline returned while the transaction is open: %v", err)
	default:
	}

	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-patient:
		if err != nil {
			t.Fatalf("the Send without a deadline, after the commit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the Send without a deadline still waits 20 s after the commit")
	}
	page, err := b.client.ListMessages(b.ctx, "acme", hookd.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 {
		t.Fatalf("%d messages, want the one sent without a deadline alone", len(page.Data))
	}
	if _, err := b.client.Send(b.ctx, "acme", msg(n+1)); err != nil {
		t.Fatalf("Send after the commit: %v", err)
	}
}
