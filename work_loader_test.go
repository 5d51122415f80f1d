package hookd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// batchStore answers LoadWorkBatch from a map, and records the batches it was asked for. The
// first call waits for release, so that the requests made meanwhile gather.
type batchStore struct {
	work    map[string]Work
	err     error
	release chan struct{}

	mu      sync.Mutex
	batches [][]string
}

func (s *batchStore) LoadWorkBatch(ctx context.Context, ids []string) (map[string]Work, error) {
	s.mu.Lock()
	first := len(s.batches) == 0
	s.batches = append(s.batches, append([]string(nil), ids...))
	s.mu.Unlock()
	if first {
		<-s.release
	}
	if s.err != nil {
		return nil, s.err
	}
	out := map[string]Work{}
	for _, id := range ids {
		if w, ok := s.work[id]; ok {
			out[id] = w
		}
	}
	return out, nil
}

func TestWorkLoaderCoalesces(t *testing.T) {
	s := &batchStore{work: map[string]Work{}, release: make(chan struct{})}
	for i := range 50 {
		id := fmt.Sprintf("dlv_%02d", i)
		s.work[id] = Work{Delivery: &Delivery{ID: id}, Message: &Message{ID: "msg_" + id}}
	}
	l := &workLoader{store: s}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 51)
	load := func(id string, want error) {
		defer wg.Done()
		d, m, err := l.load(ctx, id)
		switch {
		case want != nil:
			if !errors.Is(err, want) {
				errs <- fmt.Errorf("load %s: %v, want %v", id, err, want)
			}
		case err != nil:
			errs <- fmt.Errorf("load %s: %v", id, err)
		case d.ID != id || m.ID != "msg_"+id:
			errs <- fmt.Errorf("load %s: got delivery %s, message %s", id, d.ID, m.ID)
		}
	}
	wg.Add(1)
	go load("dlv_00", nil)
	for { // the first read is running
		s.mu.Lock()
		n := len(s.batches)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for i := 1; i < 50; i++ {
		wg.Add(1)
		go load(fmt.Sprintf("dlv_%02d", i), nil)
	}
	wg.Add(1)
	go load("dlv_missing", ErrNotFound)
	for { // every request is waiting
		l.mu.Lock()
		n := len(l.waiting)
		l.mu.Unlock()
		if n == 50 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(s.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(s.batches) != 2 || len(s.batches[1]) != 50 {
		sizes := []int{}
		for _, b := range s.batches {
			sizes = append(sizes, len(b))
		}
		t.Errorf("batch sizes %v, want [1 50]: the requests made during the first read share the second", sizes)
	}
}

func TestWorkLoaderError(t *testing.T) {
	boom := errors.New("database gone")
	s := &batchStore{err: boom, release: make(chan struct{})}
	close(s.release)
	l := &workLoader{store: s}
	if _, _, err := l.load(context.Background(), "dlv_1"); !errors.Is(err, boom) {
		t.Fatalf("load: %v, want %v", err, boom)
	}
	// The loader goes on after an error.
	s.err = nil
	s.work = map[string]Work{"dlv_2": {Delivery: &Delivery{ID: "dlv_2"}, Message: &Message{ID: "msg_2"}}}
	if d, _, err := l.load(context.Background(), "dlv_2"); err != nil || d.ID != "dlv_2" {
		t.Fatalf("load after an error: %v, %v", d, err)
	}
}

func TestWorkLoaderContext(t *testing.T) {
	s := &batchStore{release: make(chan struct{})}
	l := &workLoader{store: s}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := l.load(ctx, "dlv_1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("load: %v, want the context's error", err)
	}
	close(s.release)
}
