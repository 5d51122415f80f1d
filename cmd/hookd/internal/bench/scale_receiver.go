package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// fillReceiver is the fill's customers' servers: one HTTP server on 127.0.0.1 with a path per
// endpoint (/r/<application>/<endpoint>). It answers 200, except a share of attempts at random
// (transientRate, retried) and every attempt of a share of deliveries (permanentRate, which fail
// for good), with HTTP 500. It does not verify signatures: the fill measures hookd's writes, and
// the bench's own fillReceiver verifies them elsewhere.
type fillReceiver struct {
	seed uint64
	ln   net.Listener
	srv  *http.Server

	ok, failed, permanent atomic.Int64
}

// startFillReceiver listens on 127.0.0.1:port (0: any free port).
func startFillReceiver(seed uint64, port int) (*fillReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	r := &fillReceiver{seed: seed, ln: ln}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("scale receiver: %v", err)) // Serve fails only on a broken listener
		}
	}()
	return r, nil
}

func (r *fillReceiver) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *fillReceiver) url(app, ep int) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", r.port(), endpointPath(app, ep))
}

func endpointPath(app, ep int) string { return fmt.Sprintf("/r/%d/%d", app, ep) }

var seqKey = []byte(`{"seq":`)

func (r *fillReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	seq := -1
	if rest, ok := bytes.CutPrefix(body, seqKey); ok {
		if end := bytes.IndexByte(rest, ','); end > 0 {
			seq, _ = strconv.Atoi(string(rest[:end]))
		}
	}
	switch {
	case seq >= 0 && failsForGood(r.seed, seq, req.URL.Path):
		r.permanent.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"the customer's server keeps failing"}`)
	case rand.Float64() < transientRate:
		r.failed.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"temporarily unavailable"}`)
	default:
		r.ok.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"received":true}`)
	}
}

func (r *fillReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}
