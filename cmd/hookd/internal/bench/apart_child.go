package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// This file holds the children of --apart: "hookd bench receiver" and "hookd bench sender",
// each a small HTTP server on 127.0.0.1 that writes "listening on URL" on stderr once it serves,
// as hookd serve does, and runs until its context ends or the bench kills it. apart.go drives
// them.

// The control routes' bodies, shared by both sides.
type (
	// receiverExpect is POST /-bench/expect: make Path accept requests signed with Secret.
	receiverExpect struct {
		Path   string `json:"path"`
		Secret string `json:"secret"`
		Hang   bool   `json:"hang"`
	}
	// receiverDelivered answers GET /-bench/delivered?atleast=N&waitMs=MS: the verified
	// deliveries once there are N, or after MS.
	receiverDelivered struct {
		Delivered int `json:"delivered"`
	}
	// receiverArrival answers GET /-bench/arrival?id=ID&path=PATH&waitMs=MS: the first verified
	// arrival of message ID at PATH, waited for up to MS.
	receiverArrival struct {
		Arrived    bool  `json:"arrived"`
		AtUnixNano int64 `json:"atUnixNano"`
	}
	// receiverCounts answers GET /-bench/counts: what the receiver saw (Expected unset), and
	// the latest first arrival on an answering path (0: none).
	receiverCounts struct {
		Counts       benchCounts `json:"counts"`
		LastUnixNano int64       `json:"lastUnixNano"`
	}
	// senderJob is POST /-bench/send: send Messages messages of Bench to the API at Base with
	// the admin Token, through Producers concurrent producers.
	senderJob struct {
		Base      string `json:"base"`
		Token     string `json:"token"`
		MsgPath   string `json:"msgPath"`
		Bench     string `json:"bench"`
		Messages  int    `json:"messages"`
		Producers int    `json:"producers"`
	}
	// senderResult answers a senderJob once every send is answered.
	senderResult struct {
		StartUnixNano int64   `json:"startUnixNano"` // the first send's start
		EndUnixNano   int64   `json:"endUnixNano"`   // the last send's end
		LatenciesNs   []int64 `json:"latenciesNs"`   // every send's duration, in no particular order
	}
)

// RunReceiver runs "hookd bench receiver": a receiver that verifies every request, as the bench's
// own does, with the control routes under /-bench/ through which the bench teaches it the
// endpoints' secrets and asks what it saw. It serves until ctx ends.
func RunReceiver(ctx context.Context, stderr io.Writer) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("bench receiver: %w", err)
	}
	r := serveBenchReceiver(ln, receiverControl)
	defer r.close()
	fmt.Fprintf(stderr, "listening on %s\n", r.base)
	<-ctx.Done()
	return nil
}

// receiverControl returns the control routes of r.
func receiverControl(r *benchReceiver) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+receiverControlPrefix+"expect", func(w http.ResponseWriter, req *http.Request) {
		var in receiverExpect
		if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := r.expect(in.Path, in.Secret, in.Hang); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, struct{}{})
	})
	mux.HandleFunc("GET "+receiverControlPrefix+"delivered", func(w http.ResponseWriter, req *http.Request) {
		n, err1 := strconv.Atoi(req.URL.Query().Get("atleast"))
		wait, err2 := waitParam(req)
		if err1 != nil || err2 != nil {
			http.Error(w, "want atleast and waitMs", http.StatusBadRequest)
			return
		}
		writeJSON(w, receiverDelivered{Delivered: r.waitDelivered(req.Context(), n, wait)})
	})
	mux.HandleFunc("GET "+receiverControlPrefix+"arrival", func(w http.ResponseWriter, req *http.Request) {
		wait, err := waitParam(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		q := req.URL.Query()
		var out receiverArrival
		if at, err := r.waitArrival(req.Context(), q.Get("id"), q.Get("path"), wait); err == nil {
			out = receiverArrival{Arrived: true, AtUnixNano: at.UnixNano()}
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("GET "+receiverControlPrefix+"counts", func(w http.ResponseWriter, req *http.Request) {
		c, _ := r.counts(0)
		last, _ := r.lastArrival()
		out := receiverCounts{Counts: c}
		if !last.IsZero() {
			out.LastUnixNano = last.UnixNano()
		}
		writeJSON(w, out)
	})
	return mux
}

// waitParam reads a control route's waitMs.
func waitParam(req *http.Request) (time.Duration, error) {
	ms, err := strconv.ParseInt(req.URL.Query().Get("waitMs"), 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("want waitMs, 0 or more")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// writeJSON answers 200 with v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// RunSender runs "hookd bench sender": it waits for a job on POST /-bench/send, runs its
// producers against the API the job names, as the bench's own producers do, and answers with
// their timings. It serves until ctx ends.
func RunSender(ctx context.Context, stderr io.Writer) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("bench sender: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+receiverControlPrefix+"send", func(w http.ResponseWriter, req *http.Request) {
		var job senderJob
		if err := json.NewDecoder(req.Body).Decode(&job); err != nil || job.Messages < 1 || job.Producers < 1 {
			http.Error(w, fmt.Sprintf("want a job with messages and producers (%v)", err), http.StatusBadRequest)
			return
		}
		inst := &apiInstance{http: apiHTTPClient(job.Producers), base: job.Base, token: job.Token, msgPath: job.MsgPath}
		defer inst.http.CloseIdleConnections()
		start := time.Now()
		lats, err := sendAll(req.Context(), inst, job.Bench, job.Messages, job.Producers)
		end := time.Now()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out := senderResult{StartUnixNano: start.UnixNano(), EndUnixNano: end.UnixNano(), LatenciesNs: make([]int64, len(lats))}
		for i, d := range lats {
			out.LatenciesNs[i] = int64(d)
		}
		writeJSON(w, out)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Fprintf(stderr, "listening on http://%s\n", ln.Addr())
	<-ctx.Done()
	return nil
}
