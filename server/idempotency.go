package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hookd/hookd"
)

const (
	// idempotencyTTL is how long a POST's response is replayed for its Idempotency-Key.
	idempotencyTTL = 12 * time.Hour
	// maxIdempotencyKey bounds the header's length.
	maxIdempotencyKey = 256
	// maxReplayBody is the largest response body kept for a replay; a larger one is not kept.
	maxReplayBody = 1 << 20
)

// idempotent serves a POST that carries an Idempotency-Key: the first response under the key
// (its status and body) is stored and replayed, with the header Idempotent-Replayed: true, for
// idempotencyTTL. The key is scoped by the caller's token, the generation, the method and the
// path. While one request runs under a key, a duplicate waits for it (an in-process lock), then
// replays its response. Responses of 500 and above, and 429 (a rate limit), are not stored, so
// a retry runs again. Without the header, serve runs as it is.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, rc *reqCtx, serve func(http.ResponseWriter)) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" || r.Method != http.MethodPost {
		serve(w)
		return
	}
	if len(key) > maxIdempotencyKey {
		writeError(w, invalidField("header", "idempotency-key", "at most "+strconv.Itoa(maxIdempotencyKey)+" characters"))
		return
	}
	scoped := idempotencyScope(bearer(r), rc.gen, r.Method, r.URL.Path, key)
	unlock, err := s.idem.lock(r, scoped)
	if err != nil {
		return // the caller went away while waiting
	}
	defer unlock()

	store := s.client.Store()
	prev, err := store.GetIdempotentResponse(r.Context(), scoped, time.Now())
	switch {
	case err == nil:
		replay(w, prev)
		return
	case !errors.Is(err, hookd.ErrNotFound):
		s.cfg.Logger.Error("read an idempotent response", "path", r.URL.Path, "error", err)
		writeError(w, err) // a database that cannot be read is a 503, anything else a 500
		return
	}

	rec := &recordingWriter{ResponseWriter: w}
	serve(rec)
	if rec.status == 0 || rec.status >= 500 || rec.status == http.StatusTooManyRequests || rec.overflow {
		return
	}
	now := time.Now().UTC()
	err = store.InTx(r.Context(), func(tx hookd.Tx) error {
		return tx.PutIdempotentResponse(r.Context(), &hookd.IdempotentResponse{
			Key: scoped, Status: rec.status, Body: rec.body.Bytes(), CreatedAt: now, ExpiresAt: now.Add(idempotencyTTL),
		})
	})
	if err != nil && !errors.Is(err, hookd.ErrConflict) {
		s.cfg.Logger.Error("store an idempotent response", "path", r.URL.Path, "error", err)
	}
}

// idempotencyScope is the stored key: a digest of who asked, in which generation, what, and the
// caller's key, so that keys of different tokens or routes never meet and no token is stored.
func idempotencyScope(token string, gen generation, method, path, key string) string {
	h := sha256.New()
	for _, part := range []string{hashToken(token), strconv.Itoa(int(gen)), method, path, key} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "idem:" + hex.EncodeToString(h.Sum(nil))
}

func replay(w http.ResponseWriter, resp *hookd.IdempotentResponse) {
	if len(resp.Body) > 0 {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// recordingWriter passes a response through and keeps its status and body.
type recordingWriter struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
}

func (rw *recordingWriter) WriteHeader(status int) {
	if rw.status == 0 {
		rw.status = status
	}
	rw.ResponseWriter.WriteHeader(status)
}

func (rw *recordingWriter) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	if rw.body.Len()+len(p) > maxReplayBody {
		rw.overflow = true
	} else if !rw.overflow {
		rw.body.Write(p)
	}
	return rw.ResponseWriter.Write(p)
}

// keyLocks is one lock per idempotency key in flight. The zero value is ready.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{} // holds a value while locked
	refs int
}

// lock takes the lock of key, waiting until it is free or the request ends.
func (k *keyLocks) lock(r *http.Request, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()

	release := func() {
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-r.Context().Done():
		release()
		return nil, r.Context().Err()
	}
}
