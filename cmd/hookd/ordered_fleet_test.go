package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// orderRecv is a slow receiver that records the message numbers of every request in arrival
// order. Once armed with process ids, it holds the next request one of them sends (its head in
// flight) until the test releases it, and says which process sent it.
type orderRecv struct {
	srv   *httptest.Server
	delay time.Duration

	mu       sync.Mutex
	arrivals []int
	inFlight int
	most     int
	armed    []int         // process ids: hold the next request one of them sends; nil: hold none
	heldSeq  int           // the message number of the request held
	heldPID  int           // the process that sent it
	held     chan struct{} // closed once a request of the armed process is held
	release  chan struct{} // closed to answer the held request
}

func newOrderRecv(delay time.Duration) *orderRecv {
	r := &orderRecv{delay: delay}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *orderRecv) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var p struct {
		Seq int `json:"seq"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.arrivals = append(r.arrivals, p.Seq)
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	var release chan struct{}
	for _, pid := range r.armed {
		if socketOf(pid, req.RemoteAddr) {
			r.armed, r.heldSeq, r.heldPID, release = nil, p.Seq, pid, r.release
			close(r.held)
			break
		}
	}
	r.mu.Unlock()
	if release != nil {
		<-release
	}
	time.Sleep(r.delay)
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// arm makes the receiver hold the next request one of the processes pids sends; held is closed
// once it does.
func (r *orderRecv) arm(pids ...int) (held, release chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed, r.held, r.release = pids, make(chan struct{}), make(chan struct{})
	return r.held, r.release
}

func (r *orderRecv) snapshot() ([]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.arrivals), r.most
}

// socketOf reports whether the TCP connection whose far end is remote (as the receiver sees it,
// 127.0.0.1:port) belongs to process pid: the socket with that local port in /proc/net/tcp is
// one of pid's open files.
func socketOf(pid int, remote string) bool {
	_, port, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			if i := strings.LastIndexByte(fields[1], ':'); i >= 0 {
				if p, err := strconv.ParseInt(fields[1][i+1:], 16, 32); err == nil && int(p) == n {
					inode = fields[9]
				}
			}
		}
		_ = f.Close()
		if inode != "" {
			break
		}
	}
	if inode == "" {
		return false
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && link == "socket:["+inode+"]" {
			return true
		}
	}
	return false
}

// TestFleetOrderedSurvivesSIGKILL runs one API process and two worker processes on PostgreSQL with
// an ordered endpoint behind a slow receiver, and kills with SIGKILL the worker whose attempt of
// the head is in flight. Every message arrives, first arrivals are in message order, and the only
// repeat is of a head: the killed one's, made again once its job's lease runs out (--timeout and
// --max-timeout 1 s: a job timeout of 31 s, a lease of 61 s).
func TestFleetOrderedSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three processes for over a minute")
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("needs /proc/net/tcp to tell which worker process sent a request")
	}
	dbURL := freshDatabase(t)
	bin := buildHookd(t)
	recv := newOrderRecv(30 * time.Millisecond)
	defer recv.srv.Close()

	const messages = 300
	common := []string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "1s", "--max-timeout", "1s"}
	api := startProcess(t, bin, append([]string{"--role", "api"}, common...)...)
	w1 := startProcess(t, bin, append([]string{"--role", "worker"}, common...)...)
	w2 := startProcess(t, bin, append([]string{"--role", "worker"}, common...)...)
	mustCall(t, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app", testAdminToken, `{"name":"ordered","uid":"ordered"}`)
	ep := mustCall(t, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app/ordered/endpoint", testAdminToken,
		fmt.Sprintf(`{"url":"%s/ordered","ordered":true}`, recv.srv.URL))
	if ep["ordered"] != true {
		t.Fatalf("endpoint not ordered: %v", ep)
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := range messages { // one after another: message order is this loop's
			mustCall(t, http.StatusAccepted, http.MethodPost, api.url+"/api/v1/app/ordered/msg", testAdminToken,
				fmt.Sprintf(`{"eventType":"ordered.test","payload":{"seq":%d}}`, i))
		}
	}()

	// Once some messages went, hold the next attempt of a head, from whichever worker holds the
	// endpoint's one slot, and kill that worker meanwhile.
	deadline := time.Now().Add(60 * time.Second)
	for arrivals, _ := recv.snapshot(); len(arrivals) < 20; arrivals, _ = recv.snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests after 60 s; worker logs:\n%s\n%s", len(arrivals), w1.log(), w2.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
	held, release := recv.arm(w1.cmd.Process.Pid, w2.cmd.Process.Pid)
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatalf("no worker made an attempt in 60 s; their logs:\n%s\n%s", w1.log(), w2.log())
	}
	recv.mu.Lock()
	headAtKill, killed := recv.heldSeq, recv.heldPID
	recv.mu.Unlock()
	victim, survivor := w1, w2
	if killed == w2.cmd.Process.Pid {
		victim, survivor = w2, w1
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.ended
	close(release)
	<-sent

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var delivered int
	deadline = time.Now().Add(4 * time.Minute)
	for {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM hookd_deliveries WHERE status = 'delivered'`).Scan(&delivered); err != nil {
			t.Fatal(err)
		}
		if delivered == messages || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if delivered != messages {
		t.Fatalf("%d deliveries recorded delivered, want %d; surviving worker's log:\n%s", delivered, messages, survivor.log())
	}

	arrivals, most := recv.snapshot()
	var first, repeated []int
	for i, seq := range arrivals {
		switch {
		case seq == len(first):
			first = append(first, seq)
		case seq == len(first)-1:
			repeated = append(repeated, seq) // the head again
		default:
			t.Fatalf("arrival %d is message %d after messages 0..%d arrived: out of order or a repeat of a message not the head\n%v",
				i, seq, len(first)-1, arrivals)
		}
	}
	if len(first) != messages {
		t.Fatalf("%d of %d messages arrived", len(first), messages)
	}
	if !slices.Contains(repeated, headAtKill) {
		t.Errorf("the head held at the kill, message %d, was not made again (repeats %v)", headAtKill, repeated)
	}
	t.Logf("%d messages in order through a SIGKILL of the worker attempting message %d: repeats %v, at most %d in flight",
		messages, headAtKill, repeated, most)
}
