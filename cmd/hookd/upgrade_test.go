package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookd/hookd/internal/upgradetest"
)

// upgradeRoot holds the fixtures: databases written by earlier builds' own "hookd serve", with
// what those builds answered (testdata/upgrade/README.md says how they are made).
const upgradeRoot = "../../testdata/upgrade"

// Bounds of the waits of TestUpgrade. A fixture's pending deliveries are due when the binary
// starts, so they arrive within seconds; the bounds leave room for a loaded CI machine.
const (
	upgradeStartWithin   = 60 * time.Second
	upgradeDeliverWithin = 2 * time.Minute
)

// TestUpgrade starts the binary under test on each fixture's database, as an operator upgrading
// hookd starts the newer binary on the database the older one wrote, and checks that:
//   - everything the earlier build answered reads back the same through the API (the fields it
//     returned, but for changedFields), and its admin and app-portal tokens still work;
//   - every delivery the manifest expects pending arrives at the fixture's receiver address, once,
//     signed with the endpoint's current secret (Standard Webhooks), with the recorded payload and
//     the endpoint's custom headers, an ordered endpoint's in message order; a delivered or failed
//     one is not sent again; a message sent after the upgrade is delivered too;
//   - health is 2xx, SIGTERM stops it cleanly, and the database ends with every table, column,
//     index and function the binary gives a new database (a migration skipped shows here).
//
// The fixtures of brokenHistories must be among them, and upgraded like the others.
func TestUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the binary once per upgrade fixture")
	}
	if upgradeUnderRace {
		t.Skip("the binary under test is built without -race: go test without -race runs this test")
	}
	bin := buildHookd(t)
	states := map[string]bool{}
	for _, store := range []string{upgradetest.StoreSQLite, upgradetest.StorePostgres} {
		dirs, err := upgradetest.Fixtures(upgradeRoot, store)
		if err != nil {
			t.Fatal(err)
		}
		if len(dirs) == 0 {
			t.Fatalf("no %s fixture under %s", store, upgradeRoot)
		}
		for _, dir := range dirs {
			m, err := upgradetest.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			states[m.Store+"/"+m.State] = true
			t.Run(store+"/"+m.Name, func(t *testing.T) {
				t.Parallel()
				upgradeFixture(t, bin, dir, m)
			})
		}
	}
	for state := range brokenHistories {
		if !states[state] {
			t.Errorf("no fixture of %s, a broken migration history the test must cover", state)
		}
	}
}

// brokenHistories are the fixtures whose recorded history is broken, each with the migration at
// fault. hookd upgrades them (it applies what is missing, and migration 16 repairs an earlier
// text), as docs/upgrading.md promises; refusing to start would at least name the migration, and
// running without delivering is what the runners before v0.1.0 did with them.
var brokenHistories = map[string]int{
	"sqlite/db8f5f0":   6,  // records 0007 without 0006 (message tags): MAX(version) runners never apply it
	"sqlite/8601f23":   8,  // records 0009 without 0008 (sessions)
	"sqlite/4548fc5":   15, // applied an earlier text of 0015 (delivery jobs)
	"postgres/db8f5f0": 4,  // records 0005 without 0004 (message tags)
	"postgres/8601f23": 6,  // records 0007 without 0006 (sessions)
	"postgres/a5da793": 12, // applied an earlier 0012: hookd_acquire_slots has another signature
	"postgres/c45338a": 12, // the same
}

func upgradeFixture(t *testing.T, bin, dir string, m *upgradetest.Manifest) {
	db := restoreFixture(t, dir, m)
	db.holdExpiries(t)
	rcv := listenUpgradeReceiver(t, m.Receiver)

	// No --token: the admin token that authenticates is the one the earlier build stored.
	// --retention none: no sweep deletes the fixture's old messages.
	p, exitLog := startUpgraded(t, bin, m, "--db", db.flag, "--allow-subnets", "127.0.0.0/8", "--retention", "none")
	if p == nil {
		checkRefusal(t, m, exitLog)
		return
	}
	api := &upgradeAPI{t: t, base: p.url, token: m.AdminToken}
	api.health()
	checkReadBack(t, api, m)
	checkPortalToken(t, p.url, m)

	want := pendingArrivals(m)
	want = append(want, sendAfterUpgrade(t, api, m))
	checkArrivals(t, p, rcv, want)
	waitDelivered(t, p, api, want)
	checkAttempts(t, api, m)
	checkOnce(t, rcv, want)
	api.health()

	p.terminate(t, 30*time.Second)
	db.checkAttemptsTyped(t)
	if missing := missingFrom(freshSchema(t, bin, m.Store), db.schema(t)); len(missing) > 0 {
		t.Errorf("the upgraded database lacks what the binary gives a new one (a migration not applied, or applied from another text):\n  %s",
			strings.Join(missing, "\n  "))
	}
}

// startUpgraded starts bin serve on the fixture's database. It returns the process once it
// listens, or nil and its log if it exited first. When the test ends it kills the process and
// checks its log for the fixture's secrets.
func startUpgraded(t *testing.T, bin string, m *upgradetest.Manifest, args ...string) (*fleetProcess, string) {
	t.Helper()
	p := &fleetProcess{cmd: exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...), ended: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "HOOKD_LOG_LEVEL=info")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.ended
		_ = p.cmd.Wait()
		checkServeLogs(t, "hookd serve's stderr", p.log(), fixtureSecrets(m))
	})
	listening := make(chan string, 1)
	go func() {
		defer close(p.ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	select {
	case p.url = <-listening:
		return p, ""
	case <-p.ended:
		_ = p.cmd.Wait()
		return nil, fmt.Sprintf("exit status %d\n%s", p.cmd.ProcessState.ExitCode(), p.log())
	case <-time.After(upgradeStartWithin):
		t.Fatalf("hookd serve not listening %s after its start on the fixture:\n%s", upgradeStartWithin, p.log())
	}
	return nil, ""
}

// fixtureSecrets are the secrets a fixture holds, which no log line may show.
func fixtureSecrets(m *upgradetest.Manifest) []string {
	out := []string{m.AdminToken}
	if m.Portal != nil {
		out = append(out, m.Portal.Token)
	}
	for _, a := range m.Applications {
		for _, e := range a.Endpoints {
			out = append(out, e.Secret)
		}
	}
	return out
}

// checkRefusal fails the test with the log of a start that stopped: every fixture must be
// upgraded. For a broken history it says whether the error at least named the migration at fault.
func checkRefusal(t *testing.T, m *upgradetest.Manifest, log string) {
	t.Helper()
	version, broken := brokenHistories[m.Store+"/"+m.State]
	if !broken {
		t.Fatalf("hookd serve refused a database an earlier build wrote (%s, state %s), which it must upgrade:\n%s", m.Store, m.State, log)
	}
	named := regexp.MustCompile(fmt.Sprintf(`(?i)migration\D{0,40}\b0*%d\b|\b0*%d_\w+\.sql`, version, version))
	t.Fatalf("hookd serve refused a database with a broken migration history (%s, state %s), which it must upgrade (the error names migration %d: %v):\n%s",
		m.Store, m.State, version, named.MatchString(log), log)
}

// upgradeAPI calls the server under test with a token.
type upgradeAPI struct {
	t     *testing.T
	base  string
	token string
}

// do sends body (none when nil) and returns the status and the answer.
func (a *upgradeAPI) do(method, path string, body any) (int, json.RawMessage) {
	a.t.Helper()
	b := ""
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		b = string(raw)
	}
	code, got := call(a.t, method, a.base+path, a.token, b)
	return code, json.RawMessage(got)
}

// get reads path, which must answer 200.
func (a *upgradeAPI) get(path string) json.RawMessage {
	a.t.Helper()
	code, b := a.do(http.MethodGet, path, nil)
	if code != http.StatusOK {
		a.t.Fatalf("GET %s after the upgrade: status %d: %s", path, code, b)
	}
	return b
}

// list reads every page of a list path.
func (a *upgradeAPI) list(path string) []json.RawMessage {
	a.t.Helper()
	var all []json.RawMessage
	q := url.Values{"limit": {"250"}}
	for range 100 {
		var page struct {
			Data     []json.RawMessage `json:"data"`
			Iterator *string           `json:"iterator"`
			Done     bool              `json:"done"`
		}
		b := a.get(path + "?" + q.Encode())
		if err := json.Unmarshal(b, &page); err != nil {
			a.t.Fatalf("GET %s: %v in %s", path, err, b)
		}
		all = append(all, page.Data...)
		if page.Done || page.Iterator == nil || len(page.Data) == 0 {
			return all
		}
		q.Set("iterator", *page.Iterator)
	}
	a.t.Fatalf("GET %s: more than 100 pages", path)
	return nil
}

// health checks that /api/v1/health answers 2xx.
func (a *upgradeAPI) health() {
	a.t.Helper()
	if code, b := a.do(http.MethodGet, "/api/v1/health", nil); code < 200 || code > 299 {
		a.t.Errorf("GET /api/v1/health after the upgrade: status %d: %s", code, b)
	}
}

// checkReadBack reads every event type, application, endpoint (its secret and headers) and
// message of the manifest through the API and compares it with what the earlier build answered.
func checkReadBack(t *testing.T, api *upgradeAPI, m *upgradetest.Manifest) {
	t.Helper()
	for _, et := range m.EventTypes {
		name := jsonString(et, "name")
		compareRecorded(t, "event type "+name, kindEventType, et, api.get("/api/v1/event-type/"+name))
	}
	for _, a := range m.Applications {
		appID := upgradetest.ID(a.App)
		compareRecorded(t, "application "+appID, kindApplication, a.App, api.get("/api/v1/app/"+appID))
		listed := map[string]bool{}
		for _, e := range api.list("/api/v1/app/" + appID + "/endpoint") {
			listed[upgradetest.ID(e)] = true
		}
		for _, e := range a.Endpoints {
			epID := upgradetest.ID(e.Endpoint)
			base := "/api/v1/app/" + appID + "/endpoint/" + epID
			compareRecorded(t, "endpoint "+epID, kindEndpoint, e.Endpoint, api.get(base))
			if !listed[epID] {
				t.Errorf("endpoint %s reads back but its application's endpoint list lacks it", epID)
			}
			if got := jsonString(api.get(base+"/secret"), "key"); got != e.Secret {
				t.Errorf("endpoint %s: secret after the upgrade differs from the one the earlier build answered", epID)
			}
			if e.Headers != nil {
				compareRecorded(t, "headers of endpoint "+epID, kindHeaders, e.Headers, api.get(base+"/headers"))
			}
		}
		for _, msg := range a.Messages {
			msgID := upgradetest.ID(msg.Message)
			compareRecorded(t, "message "+msgID, kindMessage, msg.Message, api.get("/api/v1/app/"+appID+"/msg/"+msgID))
		}
	}
}

// checkPortalToken checks that the app-portal token the earlier build issued reads its own
// application's endpoints and not another application's (the first other one).
func checkPortalToken(t *testing.T, base string, m *upgradetest.Manifest) {
	t.Helper()
	if m.Portal == nil {
		return
	}
	portal := &upgradeAPI{t: t, base: base, token: m.Portal.Token}
	if code, b := portal.do(http.MethodGet, "/api/v1/app/"+m.Portal.App+"/endpoint", nil); code != http.StatusOK {
		t.Errorf("the earlier build's app-portal token reads its application's endpoints with status %d: %s", code, b)
	}
	for _, a := range m.Applications {
		other := upgradetest.ID(a.App)
		if other == m.Portal.App {
			continue
		}
		if code, _ := portal.do(http.MethodGet, "/api/v1/app/"+other+"/endpoint", nil); code < 400 || code > 499 {
			t.Errorf("the app-portal token of %s reads application %s's endpoints with status %d, want a 4xx", m.Portal.App, other, code)
		}
		break
	}
}

// arrival is a delivery the receiver must get.
type arrival struct {
	app, endpoint, msg string
	path               string          // the endpoint URL's path
	payload            json.RawMessage // the message's payload as recorded
	secret             string
	headers            map[string]string // the endpoint's custom headers
	ordered            bool
}

// pendingArrivals lists the deliveries the manifest expects pending, in message order.
func pendingArrivals(m *upgradetest.Manifest) []arrival {
	var out []arrival
	for _, a := range m.Applications {
		eps := map[string]upgradetest.Endpoint{}
		for _, e := range a.Endpoints {
			eps[upgradetest.ID(e.Endpoint)] = e
		}
		for _, msg := range a.Messages {
			for _, d := range msg.Deliveries {
				if d.State == upgradetest.Pending {
					out = append(out, arrivalAt(upgradetest.ID(a.App), eps[d.Endpoint], upgradetest.ID(msg.Message), jsonField(msg.Message, "payload")))
				}
			}
		}
	}
	return out
}

func arrivalAt(appID string, e upgradetest.Endpoint, msgID string, payload json.RawMessage) arrival {
	u, _ := url.Parse(jsonString(e.Endpoint, "url"))
	var h struct {
		Headers map[string]string `json:"headers"`
	}
	_ = json.Unmarshal(e.Headers, &h)
	return arrival{app: appID, endpoint: upgradetest.ID(e.Endpoint), msg: msgID, path: u.Path, payload: payload,
		secret: e.Secret, headers: h.Headers, ordered: e.Ordered}
}

// sendAfterUpgrade sends a message with tags to the application "acme", whose endpoint "acme-ok"
// takes it, and returns its arrival: the upgraded database takes and delivers new messages.
func sendAfterUpgrade(t *testing.T, api *upgradeAPI, m *upgradetest.Manifest) arrival {
	t.Helper()
	for _, a := range m.Applications {
		if jsonString(a.App, "uid") != "acme" {
			continue
		}
		for _, e := range a.Endpoints {
			if jsonString(e.Endpoint, "uid") != "acme-ok" {
				continue
			}
			appID := upgradetest.ID(a.App)
			payload := json.RawMessage(`{"invoice":"in_after_upgrade","note":"sent by the binary under test"}`)
			code, b := api.do(http.MethodPost, "/api/v1/app/"+appID+"/msg", map[string]any{
				"eventType": "invoice.paid", "eventId": "after-upgrade", "payload": payload, "tags": []string{"after-upgrade"},
			})
			if code != http.StatusAccepted {
				t.Fatalf("a message sent after the upgrade: status %d: %s", code, b)
			}
			return arrivalAt(appID, e, upgradetest.ID(b), payload)
		}
	}
	t.Fatal("the manifest has no endpoint acme-ok of application acme")
	return arrival{}
}

// checkArrivals waits until every arrival of want reached the receiver and checks each request:
// one expected, signed with its endpoint's current secret, with the recorded payload and the
// endpoint's headers; an ordered endpoint's in message order.
func checkArrivals(t *testing.T, p *fleetProcess, rcv *upgradeReceiver, want []arrival) {
	t.Helper()
	deadline := time.NewTimer(upgradeDeliverWithin)
	defer deadline.Stop()
	for {
		got, changed := rcv.all()
		missing := missingArrivals(got, want)
		if len(missing) == 0 {
			break
		}
		select {
		case <-changed:
		case <-p.ended:
			t.Fatalf("hookd serve exited with %d deliveries still to arrive:\n%s", len(missing), p.log())
		case <-deadline.C:
			t.Fatalf("%d of %d deliveries the fixture holds pending did not arrive within %s (the first: message %s to endpoint %s at %s); hookd serve's log:\n%s",
				len(missing), len(want), upgradeDeliverWithin, missing[0].msg, missing[0].endpoint, missing[0].path, p.log())
		}
	}
	got, _ := rcv.all()
	byKey := map[string]arrival{}
	for _, w := range want {
		byKey[w.path+" "+w.msg] = w
	}
	order := map[string][]string{} // an ordered endpoint's path: the message ids in arrival order
	for _, r := range got {
		w, ok := byKey[r.path+" "+r.msgID]
		if !ok {
			continue // checkOnce reports it
		}
		wh, err := standardwebhooks.NewWebhook(w.secret)
		if err != nil {
			t.Fatalf("endpoint %s: secret: %v", w.endpoint, err)
		}
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Errorf("message %s to endpoint %s: the signature does not verify with the endpoint's current secret: %v", w.msg, w.endpoint, err)
		}
		if !sameJSON(r.body, w.payload) {
			t.Errorf("message %s to endpoint %s: body %s, want the recorded payload %s", w.msg, w.endpoint, r.body, w.payload)
		}
		for name, value := range w.headers {
			if got := r.header.Get(name); got != value {
				t.Errorf("message %s to endpoint %s: header %s is %q, want %q", w.msg, w.endpoint, name, got, value)
			}
		}
		if w.ordered {
			order[w.path] = append(order[w.path], w.msg)
		}
	}
	for path, gotOrder := range order {
		var wantOrder []string
		for _, w := range want {
			if w.path == path {
				wantOrder = append(wantOrder, w.msg)
			}
		}
		if strings.Join(gotOrder, " ") != strings.Join(wantOrder, " ") {
			t.Errorf("the ordered endpoint at %s got messages %v, want %v (message order)", path, gotOrder, wantOrder)
		}
	}
}

func missingArrivals(got []upgradeRequest, want []arrival) []arrival {
	seen := map[string]bool{}
	for _, r := range got {
		seen[r.path+" "+r.msgID] = true
	}
	var out []arrival
	for _, w := range want {
		if !seen[w.path+" "+w.msg] {
			out = append(out, w)
		}
	}
	return out
}

// waitDelivered waits until the API reports every arrival of want delivered (status 0 among the
// message's attempted destinations): its attempt is recorded, and nothing else is due.
func waitDelivered(t *testing.T, p *fleetProcess, api *upgradeAPI, want []arrival) {
	t.Helper()
	deadline := time.Now().Add(upgradeDeliverWithin)
	for _, w := range want {
		for {
			status := -1
			for _, d := range api.list("/api/v1/app/" + w.app + "/msg/" + w.msg + "/endpoint") {
				if upgradetest.ID(d) == w.endpoint {
					var s struct {
						Status int `json:"status"`
					}
					_ = json.Unmarshal(d, &s)
					status = s.Status
				}
			}
			if status == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message %s to endpoint %s arrived but reads status %d, not 0 (success), after %s; hookd serve's log:\n%s",
					w.msg, w.endpoint, status, upgradeDeliverWithin, p.log())
			}
			select {
			case <-p.ended:
				t.Fatalf("hookd serve exited:\n%s", p.log())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// checkAttempts compares each message's attempts with the recorded ones: every recorded attempt
// reads back the same; a delivered or failed delivery has no new attempt; a pending one has
// exactly one more, successful.
func checkAttempts(t *testing.T, api *upgradeAPI, m *upgradetest.Manifest) {
	t.Helper()
	for _, a := range m.Applications {
		appID := upgradetest.ID(a.App)
		for _, msg := range a.Messages {
			msgID := upgradetest.ID(msg.Message)
			now := map[string]json.RawMessage{}
			perEndpoint := map[string]int{}
			succeeded := map[string]int{}
			for _, at := range api.list("/api/v1/app/" + appID + "/attempt/msg/" + msgID) {
				now[upgradetest.ID(at)] = at
				ep := jsonString(at, "endpointId")
				perEndpoint[ep]++
				if code := jsonInt(at, "responseStatusCode"); code >= 200 && code <= 299 {
					succeeded[ep]++
				}
			}
			before := map[string]int{}
			beforeOK := map[string]int{}
			for _, old := range msg.Attempts {
				ep := jsonString(old, "endpointId")
				before[ep]++
				if code := jsonInt(old, "responseStatusCode"); code >= 200 && code <= 299 {
					beforeOK[ep]++
				}
				got, ok := now[upgradetest.ID(old)]
				if !ok {
					t.Errorf("message %s: attempt %s is gone after the upgrade", msgID, upgradetest.ID(old))
					continue
				}
				compareRecorded(t, "attempt "+upgradetest.ID(old), kindAttempt, old, got)
			}
			for _, d := range msg.Deliveries {
				wantAll, wantOK := before[d.Endpoint], beforeOK[d.Endpoint]
				if d.State == upgradetest.Pending {
					wantAll, wantOK = wantAll+1, wantOK+1
				}
				if perEndpoint[d.Endpoint] != wantAll || succeeded[d.Endpoint] != wantOK {
					t.Errorf("message %s to endpoint %s (%s before the upgrade): %d attempts, %d successful; want %d and %d",
						msgID, d.Endpoint, d.State, perEndpoint[d.Endpoint], succeeded[d.Endpoint], wantAll, wantOK)
				}
			}
		}
	}
}

// checkOnce checks that the receiver got each arrival of want once and nothing else: no
// delivered or failed delivery was sent again.
func checkOnce(t *testing.T, rcv *upgradeReceiver, want []arrival) {
	t.Helper()
	expected := map[string]bool{}
	for _, w := range want {
		expected[w.path+" "+w.msg] = true
	}
	got, _ := rcv.all()
	count := map[string]int{}
	for _, r := range got {
		key := r.path + " " + r.msgID
		count[key]++
		if !expected[key] {
			t.Errorf("the receiver got message %s at %s, which the fixture holds settled (delivered or failed): sent again", r.msgID, r.path)
		}
	}
	for key, n := range count {
		if expected[key] && n != 1 {
			t.Errorf("the receiver got %s %d times, want once", key, n)
		}
	}
}

func jsonField(raw json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m[name]
}

func jsonString(raw json.RawMessage, name string) string {
	var s string
	_ = json.Unmarshal(jsonField(raw, name), &s)
	return s
}

func jsonInt(raw json.RawMessage, name string) int {
	var n int
	_ = json.Unmarshal(jsonField(raw, name), &n)
	return n
}
