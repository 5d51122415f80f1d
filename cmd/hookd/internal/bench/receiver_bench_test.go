package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

// BenchmarkReceiverServeHTTP measures the receiver's own work for one delivery, without the
// network or net/http's server: reading the body, verifying the signature with the Standard
// Webhooks library and recording the arrival. Its allocations are the receiver's share of B1's
// garbage. Run it with
//
//	go test -run x -bench ReceiverServeHTTP -benchmem ./cmd/hookd/internal/bench/
func BenchmarkReceiverServeHTTP(b *testing.B) {
	recv, err := newBenchReceiver()
	if err != nil {
		b.Fatal(err)
	}
	defer recv.close()
	secret := signature.NewSecret()
	if err := recv.expect("/b1/ep0", secret, false); err != nil {
		b.Fatal(err)
	}
	signer, err := signature.NewSigner(secret)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*http.Request, b.N)
	bodies := make([][]byte, b.N)
	for i := range b.N {
		bodies[i] = benchPayload("B1", i)
		h, err := signer.Headers(signature.FlavorWebhook, fmt.Sprintf("msg_recv%020d", i), time.Now(), bodies[i])
		if err != nil {
			b.Fatal(err)
		}
		reqs[i] = httptest.NewRequest(http.MethodPost, "/b1/ep0", bytes.NewReader(bodies[i]))
		reqs[i].Header = h
	}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		recv.ServeHTTP(w, reqs[i])
	}
	b.StopTimer()
	if got := recv.deliveredCount(); got != b.N {
		b.Fatalf("the receiver verified %d of %d requests", got, b.N)
	}
}
