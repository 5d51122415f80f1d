package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/hookd/hookd/sqlite"
)

// TestCrashLosesNothing starts "hookd serve" as a real process, on SQLite and on PostgreSQL, sends
// 10,000 messages to 3 endpoints from 8 producers, and kills the process with SIGKILL at random
// moments (at least 5 times, restarting it each time) while it takes them and delivers them. A
// producer sends each message until the API accepts it (2xx); the message's event id makes a resend
// after a lost answer return the first message. Then it checks that every accepted message reached
// every endpoint, that no message lacks a delivery, and that the attempt log agrees with what the
// receiver saw: each delivery has exactly one successful attempt recorded, and the receiver saw at
// least that one. Duplicates at the receiver (attempts made but not recorded when a kill came) are
// counted and logged. It runs with HOOKD_CRASH_TEST=1 (.ci/run sets it): about 25 s on SQLite and
// 90 s on PostgreSQL, where a killed process's jobs wait for their leases to run out.
func TestCrashLosesNothing(t *testing.T) {
	if os.Getenv("HOOKD_CRASH_TEST") == "" {
		t.Skip("set HOOKD_CRASH_TEST=1 to run the crash test (about 2 minutes; .ci/run runs it)")
	}
	bin := buildHookd(t)
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "crash.db")
		crashRun(t, bin, "sqlite:"+path, func() *sql.DB {
			s, err := sqlite.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.DB()
		})
	})
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv("HOOKD_TEST_POSTGRES_URL") == "" {
			t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to run the crash test on PostgreSQL")
		}
		dbURL := freshDatabase(t)
		crashRun(t, bin, dbURL, func() *sql.DB {
			cfg, err := pgx.ParseConfig(dbURL)
			if err != nil {
				t.Fatal(err)
			}
			db := stdlib.OpenDB(*cfg)
			t.Cleanup(func() { db.Close() })
			return db
		})
	})
}

// crashTarget is the hookd process of a crash run, replaced after each kill.
type crashTarget struct {
	t    *testing.T
	bin  string
	args []string
	mu   sync.Mutex
	proc *fleetProcess
}

func (c *crashTarget) url() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc.url
}

// killAndRestart kills the process with SIGKILL and starts a new one on the same database.
func (c *crashTarget) killAndRestart() {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.ended
	_ = p.cmd.Wait()
	np := startProcess(c.t, c.bin, c.args...)
	c.mu.Lock()
	c.proc = np
	c.mu.Unlock()
}

func crashRun(t *testing.T, bin, db string, open func() *sql.DB) {
	const (
		messages  = 10_000
		endpoints = 3
		producers = 8
		minKills  = 5
		maxKills  = 8
	)
	recv := newFleetReceiver()
	defer recv.srv.Close()
	target := &crashTarget{t: t, bin: bin, args: []string{"--db", db, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s"}}
	target.proc = startProcess(t, bin, target.args...)
	mustCall(t, http.StatusCreated, http.MethodPost, target.url()+"/api/v1/app", testAdminToken, `{"name":"crash","uid":"crash"}`)
	for i := range endpoints {
		mustCall(t, http.StatusCreated, http.MethodPost, target.url()+"/api/v1/app/crash/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":"%s/c%d"}`, recv.srv.URL, i))
	}

	// Producers: each message is sent until a 2xx names its id.
	var (
		accepted   sync.Map // seq -> message id
		refused    atomic.Int64
		sendsDone  = make(chan struct{})
		httpClient = &http.Client{Timeout: 10 * time.Second}
	)
	go func() {
		defer close(sendsDone)
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				for i := p; i < messages; i += producers {
					body := fmt.Sprintf(`{"eventType":"crash.test","eventId":"crash-%d","payload":{"seq":%d}}`, i, i)
					for {
						id, ok := crashSend(httpClient, target.url(), i, body)
						if ok {
							accepted.Store(i, id)
							break
						}
						refused.Add(1)
						time.Sleep(20 * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
	}()

	// Kills at random moments, 0.5 to 2.5 s apart, while the messages go in and out: at least
	// minKills, and none after maxKills.
	kills := 0
	for kills < maxKills {
		time.Sleep(time.Duration(500+rand.IntN(2000)) * time.Millisecond)
		if kills >= minKills && closed(sendsDone) {
			break
		}
		target.killAndRestart()
		kills++
	}
	select {
	case <-sendsDone:
	case <-time.After(5 * time.Minute):
		t.Fatal("the sends did not finish within 5 min of the last kill")
	}
	n := 0
	ids := map[string]bool{}
	accepted.Range(func(_, v any) bool {
		n++
		ids[v.(string)] = true
		return true
	})
	if n != messages || len(ids) != messages {
		t.Fatalf("%d messages accepted under %d ids, want %d", n, len(ids), messages)
	}
	total := messages * endpoints
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if pairs, _ := recv.distinct(); pairs >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let the last attempts be recorded

	// Stop the last process, then read the database.
	target.mu.Lock()
	last := target.proc
	target.mu.Unlock()
	_ = last.cmd.Process.Signal(syscall.SIGTERM)
	<-last.ended
	_ = last.cmd.Wait()
	sqlDB := open()

	recv.mu.Lock()
	seen := map[string]int{}
	for k, v := range recv.seen {
		seen[k] = v
	}
	recv.mu.Unlock()
	missing, repeats := 0, 0
	for id := range ids {
		for e := range endpoints {
			switch c := seen[fmt.Sprintf("/c%d %s", e, id)]; {
			case c == 0:
				missing++
			case c > 1:
				repeats += c - 1
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d accepted message-endpoint pairs never reached the receiver (lost)", missing)
	}
	var orphans, messagesStored, successes, badAttempts int
	q := func(query string, dst *int) {
		if err := sqlDB.QueryRow(query).Scan(dst); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	q(`SELECT count(*) FROM hookd_messages`, &messagesStored)
	q(fmt.Sprintf(`SELECT count(*) FROM hookd_messages m WHERE (SELECT count(*) FROM hookd_deliveries d WHERE d.message_id = m.id) <> %d`, endpoints), &orphans)
	q(`SELECT count(*) FROM hookd_attempts WHERE success`, &successes)
	// Each delivery is delivered and has exactly one successful attempt.
	q(`SELECT count(*) FROM hookd_deliveries d WHERE d.status <> 'delivered'
		OR (SELECT count(*) FROM hookd_attempts a WHERE a.delivery_id = d.id AND a.success) <> 1`, &badAttempts)
	if messagesStored != messages {
		t.Errorf("%d messages stored, want %d (one per event id)", messagesStored, messages)
	}
	if orphans != 0 {
		t.Errorf("%d messages without all %d deliveries", orphans, endpoints)
	}
	if badAttempts != 0 {
		t.Errorf("%d deliveries not delivered, or without exactly one successful attempt recorded", badAttempts)
	}
	requests := int(recv.requests.Load())
	if successes > requests {
		t.Errorf("%d successful attempts recorded, but the receiver saw only %d requests", successes, requests)
	}
	t.Logf("%s: %d kills; %d messages accepted (%d refused or unanswered sends retried); %d of %d deliveries arrived, %d lost; "+
		"%d requests at the receiver, %d duplicates (attempts made but not recorded when a kill came); %d successful attempts recorded",
		strings.SplitN(db, ":", 2)[0], kills, messages, refused.Load(), total-missing, total, missing, requests, repeats, successes)
}

// crashSend posts message seq and returns its id once the API has accepted it: a 2xx, or a 409
// for its event id (an earlier send was committed, its answer lost in a kill), after which the
// message is read back by its event id.
func crashSend(c *http.Client, base string, seq int, body string) (string, bool) {
	code, id := crashCall(c, http.MethodPost, base+"/api/v1/app/crash/msg", body)
	if code == http.StatusConflict {
		code, id = crashCall(c, http.MethodGet, base+fmt.Sprintf("/api/v1/app/crash/msg/crash-%d", seq), "")
	}
	return id, code/100 == 2 && id != ""
}

// crashCall makes one API call and returns its status and the id in its JSON body.
func crashCall(c *http.Client, method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, ""
	}
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	var m struct {
		ID string `json:"id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m.ID
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
