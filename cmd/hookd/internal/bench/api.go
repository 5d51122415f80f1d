package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/servedefaults"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/metrics"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
)

// This file holds the bench's api target: hookd's HTTP API, wired as "hookd serve" wires it, in
// this process, and called over HTTP.

// apiTarget is the HTTP API in this process. Each run gets a new SQLite file and what serve
// builds on it with its defaults (store, metrics, client, token authenticator, server.New on a
// mux with /metrics, an http.Server with serve's limits on 127.0.0.1:0), except that loopback
// addresses are allowed, B2 sets the timeout, and no message rate per application is set (the
// library's default): B1 sends to one application faster than serve's default quota of
// --max-messages-per-second-per-app, which bounds a tenant, not the engine measured. Setup goes through the API too (POST
// /api/v1/app, POST .../endpoint, GET .../secret), untimed. Producers call POST
// /api/v1/app/{app_id}/msg with plain net/http and encoding/json over one keep-alive client,
// not with the Svix SDK: what is measured is hookd's API, not an SDK's overhead.
type apiTarget struct {
	dir       string
	producers int // concurrent callers; the HTTP client keeps this many idle connections and more
}

func (t *apiTarget) name() string { return "api" }

func (t *apiTarget) describe() string {
	return "hookd's HTTP API in this process, built as hookd serve builds it (server.New, admin token, /metrics) on 127.0.0.1, " +
		"a fresh SQLite file per run; POST /api/v1/app/{app}/msg over keep-alive HTTP/1.1 with plain net/http and JSON, not the Svix SDK"
}

func (t *apiTarget) targetSendsPerSec() float64 { return b1TargetSendsPerSecAPI }

func (t *apiTarget) targetDeliveriesPerSec() float64 { return b1TargetPerSec }

func (t *apiTarget) targetP50() time.Duration { return b3TargetP50 }

func (t *apiTarget) servers() []string { return nil }

func (t *apiTarget) open(ctx context.Context, name string, timeout time.Duration) (benchInstance, error) {
	inst, err := startAPI(ctx, filepath.Join(t.dir, t.name()+"-"+name+".db"), timeout, t.producers)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	if err := inst.createApplication(ctx, name); err != nil {
		inst.close()
		return nil, err
	}
	return inst, nil
}

// createApplication creates the instance's application, named for the run name, through the
// API, and keeps its id for the other calls.
func (i *apiInstance) createApplication(ctx context.Context, name string) error {
	var app struct {
		ID string `json:"id"`
	}
	body, err := json.Marshal(map[string]string{"name": "bench " + name, "uid": "bench-" + name})
	if err == nil {
		err = i.call(ctx, http.MethodPost, "/api/v1/app", body, http.StatusCreated, &app)
	}
	if err == nil && app.ID == "" {
		err = fmt.Errorf("create application: the answer has no id")
	}
	if err != nil {
		return err
	}
	i.app = url.PathEscape(app.ID)
	i.msgPath = "/api/v1/app/" + i.app + "/msg"
	return nil
}

// apiInstance is one application behind one API server.
type apiInstance struct {
	store  *sqlite.Store
	client *hookd.Client
	srv    *http.Server
	http   *http.Client // keep-alive, shared by the producers
	base   string       // http://127.0.0.1:port
	token  string       // the admin token the store generated

	app       string   // the application's id, escaped for a path
	msgPath   string   // POST here to send
	endpoints []string // ids
}

// startAPI opens a store at path and starts on it what "hookd serve" starts with its defaults:
// see apiTarget. conns is the number of concurrent callers the HTTP client serves.
func startAPI(ctx context.Context, path string, timeout time.Duration, conns int) (inst *apiInstance, err error) {
	inst = &apiInstance{}
	defer func() {
		if err != nil {
			inst.close()
		}
	}()
	if inst.store, err = sqlite.Open(ctx, path, nil); err != nil {
		return nil, err
	}
	m := metrics.New(inst.store, nil)
	inst.client, err = hookd.NewClient(inst.store, &hookd.Config{
		Workers: servedefaults.Lanes(servedefaults.DefaultWorkers()),
		Delivery: &delivery.Config{
			Timeout:      timeout,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		OnAttempt: m.OnAttempt,
	})
	if err != nil {
		return nil, err
	}
	// A fresh store has no admin token: NewTokenAuth generates one, as serve's first start does.
	auth, token, err := server.NewTokenAuth(ctx, inst.store, "", time.Now)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, fmt.Errorf("a fresh store kept an admin token it should not have")
	}
	inst.token = token
	m.ReportCircuits(inst.client.OpenCircuits)
	if d, ok := inst.client.Queue().(hookd.QueueDepther); ok {
		m.ReportQueue(d)
	}
	api, err := server.New(inst.client, &server.Config{Auth: auth, MaxBody: 1<<20 + servedefaults.MaxBodyOverhead})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m)
	mux.Handle("/", m.Instrument(api))

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("API listener: %w", err)
	}
	if err := inst.client.Start(context.WithoutCancel(ctx)); err != nil {
		ln.Close()
		return nil, err
	}
	inst.base = "http://" + ln.Addr().String()
	inst.srv = servedefaults.NewHTTPServer(mux)
	go inst.srv.Serve(ln)
	inst.http = apiHTTPClient(conns)
	return inst, nil
}

// apiHTTPClient is the keep-alive client that conns concurrent callers share to call an API on
// loopback.
func apiHTTPClient(conns int) *http.Client {
	return &http.Client{Timeout: servedefaults.WriteTimeout, Transport: &http.Transport{
		// No proxy from the environment: the API is on loopback.
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns + 2,
		MaxIdleConnsPerHost: conns + 2,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// call makes a request to the API with the admin token and JSON body (nil: none), and decodes the
// answer into out (nil: discarded) when its status is want. Any other status is an error quoting
// the API's answer.
func (i *apiInstance) call(ctx context.Context, method, path string, body []byte, want int, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, i.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+i.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := i.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	// Read the whole answer, so that the connection goes back to the pool.
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s, want %d: %s", method, path, resp.Status, want, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

func (i *apiInstance) addEndpoint(ctx context.Context, endpointURL string) (string, error) {
	return i.add(ctx, map[string]any{"url": endpointURL})
}

func (i *apiInstance) addOrderedEndpoint(ctx context.Context, endpointURL string) (string, error) {
	return i.add(ctx, map[string]any{"url": endpointURL, "ordered": true}) // hookd's own field
}

// add creates the endpoint the body describes and returns its secret.
func (i *apiInstance) add(ctx context.Context, in map[string]any) (string, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	var ep struct {
		ID string `json:"id"`
	}
	base := "/api/v1/app/" + i.app + "/endpoint"
	if err := i.call(ctx, http.MethodPost, base, body, http.StatusCreated, &ep); err != nil {
		return "", err
	}
	if ep.ID == "" {
		return "", fmt.Errorf("create endpoint: the answer has no id")
	}
	i.endpoints = append(i.endpoints, ep.ID)
	var secret struct {
		Key string `json:"key"`
	}
	if err := i.call(ctx, http.MethodGet, base+"/"+url.PathEscape(ep.ID)+"/secret", nil, http.StatusOK, &secret); err != nil {
		return "", err
	}
	return secret.Key, nil
}

// send posts a message and returns its id from the 202's body. The API's answer does not say how
// many deliveries the message made (the library's does); the receiver's counts check that.
func (i *apiInstance) send(ctx context.Context, payload []byte) (string, error) {
	const head = `{"eventType":"bench.event","payload":`
	body := make([]byte, 0, len(head)+len(payload)+1)
	body = append(append(append(body, head...), payload...), '}')
	var msg struct {
		ID string `json:"id"`
	}
	if err := i.call(ctx, http.MethodPost, i.msgPath, body, http.StatusAccepted, &msg); err != nil {
		return "", err
	}
	if msg.ID == "" {
		return "", fmt.Errorf("send: the answer has no id")
	}
	return msg.ID, nil
}

// count reads the store directly: it checks the run and is not measured, and the API has no
// route that counts deliveries by status.
func (i *apiInstance) count(ctx context.Context, status hookd.DeliveryStatus) (int, error) {
	return countDeliveries(ctx, i.store, i.endpoints, status)
}

// close stops what startAPI started, in serve's order: the HTTP server, then the client's
// attempts, then the database. It undoes a partial start too. The SQLite file stays.
func (i *apiInstance) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if i.http != nil {
		i.http.CloseIdleConnections()
	}
	if i.srv != nil {
		if err := i.srv.Shutdown(ctx); err != nil {
			i.srv.Close()
		}
	}
	if i.client != nil {
		i.client.Stop(ctx)
	}
	if i.store != nil {
		i.store.Close()
	}
	return nil
}
