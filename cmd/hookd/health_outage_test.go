package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The outage tests' bounds on health: it answers non-2xx within healthBound of a dependency
// going away, and 2xx again within healthBound of its return.
const healthBound = 10 * time.Second

// healthOf asks url's GET /api/v1/health and returns the status and the body; status 0 when no
// answer came within 5 s.
func healthOf(url string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url + "/api/v1/health")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// healthWatch asks for each process's health every 100 ms from its start, and notes when each
// first answered non-2xx and when, after that, it first answered 2xx again.
type healthWatch struct {
	procs map[string]*fleetProcess
	since time.Time
}

func watchHealth(procs map[string]*fleetProcess) *healthWatch {
	return &healthWatch{procs: procs, since: time.Now()}
}

// waitFor waits, for every process at once, until its health is 2xx (ok true) or not, and fails
// the test for each that does not get there within healthBound of from. It returns the last body
// of each, and logs how long each took.
func (w *healthWatch) waitFor(t *testing.T, what string, from time.Time, ok bool) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	pending := map[string]bool{}
	for name := range w.procs {
		pending[name] = true
	}
	for len(pending) > 0 {
		for name := range pending {
			code, body := healthOf(w.procs[name].url)
			if (code >= 200 && code < 300) == ok && code != 0 {
				delete(pending, name)
				bodies[name] = fmt.Sprintf("%d %s", code, body)
				t.Logf("%s: health of %s answered %d after %s: %s", what, name, code, time.Since(from).Round(100*time.Millisecond), body)
			}
		}
		if len(pending) == 0 {
			break
		}
		if time.Since(from) > healthBound {
			for name := range pending {
				code, body := healthOf(w.procs[name].url)
				t.Errorf("%s: health of %s still answers %d %s %s after it (want %s)", what, name, code, body, healthBound, map[bool]string{true: "2xx", false: "non-2xx"}[ok])
			}
			return bodies
		}
		time.Sleep(100 * time.Millisecond)
	}
	return bodies
}

// storeUp scrapes url's /metrics and returns the value of hookd_store_up ("" when absent).
func storeUp(t *testing.T, url string) string {
	t.Helper()
	_, body := call(t, http.MethodGet, url+"/metrics", "", "")
	m := regexp.MustCompile(`(?m)^hookd_store_up (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// waitStoreUp waits up to healthBound for url's hookd_store_up to read want.
func waitStoreUp(t *testing.T, url, want string) {
	t.Helper()
	began := time.Now()
	for {
		got := storeUp(t, url)
		if got == want {
			t.Logf("hookd_store_up read %s after %s", want, time.Since(began).Round(100*time.Millisecond))
			return
		}
		if time.Since(began) > healthBound {
			t.Errorf("hookd_store_up reads %q %s on, want %s", got, healthBound, want)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var (
	outageLineRE = regexp.MustCompile(`msg="hookd outage (began|continues|ended)" cause="?([^"=]+?)"? (error|failures)=`)
	levelMsgRE   = regexp.MustCompile(`level=(\w+) msg=("[^"]*"|\S+)`)
	digitsRE     = regexp.MustCompile(`[0-9]+`)
)

// checkOutageLines checks the lines a process logged during an outage that lasted about
// lasted: for each cause, at most one line when it began, one when it ended, and one summary
// every 30 s; and no other warning or error, nor any line not of slog's (a library writing to
// stderr), logged more than twice (a line per failure). It returns how many lines it read and
// how many were of outages.
func checkOutageLines(t *testing.T, who string, lines []string, lasted time.Duration) (all, outages int) {
	t.Helper()
	type counts struct{ began, continues, ended int }
	byCause := map[string]*counts{}
	others := map[string]int{}
	for _, l := range lines {
		if l == "" {
			continue
		}
		all++
		if m := outageLineRE.FindStringSubmatch(l); m != nil {
			outages++
			c := byCause[m[2]]
			if c == nil {
				c = &counts{}
				byCause[m[2]] = c
			}
			switch m[1] {
			case "began":
				c.began++
			case "continues":
				c.continues++
			case "ended":
				c.ended++
			}
			continue
		}
		switch m := levelMsgRE.FindStringSubmatch(l); {
		case m == nil: // not slog's: a library's line on stderr, known by its text without numbers
			key := digitsRE.ReplaceAllString(l, "")
			others[key[:min(len(key), 60)]]++
		case m[1] == "WARN" || m[1] == "ERROR":
			others[m[2]]++
		}
	}
	summaries := int(lasted/(30*time.Second)) + 1
	for cause, c := range byCause {
		if c.began > 1 || c.ended > 1 || c.continues > summaries {
			t.Errorf("%s: cause %q logged %d lines when it began, %d summaries and %d when it ended during an outage of %s; want at most 1, %d and 1",
				who, cause, c.began, c.continues, c.ended, lasted.Round(time.Second), summaries)
		}
	}
	for msg, n := range others {
		if n > 2 {
			t.Errorf("%s: %d lines %s during the outage: a line per failure", who, n, msg)
		}
	}
	if t.Failed() {
		t.Logf("%s's lines during the outage:\n%s", who, strings.Join(lines, "\n"))
	}
	return all, outages
}

// linesSince returns the lines p logged after its first n.
func linesSince(p *fleetProcess, n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines[min(n, len(p.lines)):]...)
}

// lineCount returns how many lines p has logged.
func lineCount(p *fleetProcess) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}
