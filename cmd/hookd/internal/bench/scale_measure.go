package bench

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ScaleOptions configure "hookd bench scale": two hookd serve children, one on DB (of
// HookdBinary) and one on BaseDB (of BaseBinary), timed request by request, alternated.
type ScaleOptions struct {
	DB, Schema          string // the full database (--db, --schema)
	BaseDB, BaseSchema  string // the baseline: by default a small database of the same shape
	HookdBinary         string // serves DB; "": this binary
	BaseBinary          string // serves BaseDB; "": HookdBinary
	BaseMessages        int    // messages of the small database the bench fills when BaseDB holds none
	Rounds              int    // timed rounds of every request on each side, after one untimed
	Progress            io.Writer
	Logger              *slog.Logger
	serveArgs, baseArgs []string // extra serve flags, for tests
}

// DefaultScaleOptions: 2,000 messages in the small database, 20 rounds.
func DefaultScaleOptions() ScaleOptions {
	return ScaleOptions{BaseMessages: 2000, Rounds: 20}
}

// ScaleReport is the measure's table.
type ScaleReport struct {
	Full     ScaleSide      `json:"full"`
	Base     ScaleSide      `json:"base"`
	Rounds   int            `json:"rounds"`
	Requests []ScaleRequest `json:"requests"`
	Problems []string       `json:"problems,omitempty"`
}

// ScaleSide is one of the two servers.
type ScaleSide struct {
	DB       string      `json:"db"`
	Binary   string      `json:"binary"`
	Counts   ScaleCounts `json:"counts"`
	App      string      `json:"app"`      // the largest application's id
	Endpoint string      `json:"endpoint"` // its busiest endpoint (the catch-all ep-0)
	Message  string      `json:"message"`  // its newest message
}

// ScaleRequest is one request's timings on both sides, in milliseconds.
type ScaleRequest struct {
	Name     string  `json:"name"`
	Path     string  `json:"path"` // on the full side
	Full     Latency `json:"full"`
	Base     Latency `json:"base"`
	RatioP50 float64 `json:"ratioP50"` // full ÷ base
	RatioP95 float64 `json:"ratioP95"`
}

// Latency is the percentiles of one request's times, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// scaleServer is one side: a hookd serve child and what its requests name.
type scaleServer struct {
	side    ScaleSide
	db      *scaleDB
	child   *fleetChild
	token   string
	http    *http.Client // holds the dashboard's and the portal's session cookies
	reqs    []scaleReq
	oldest  time.Time // the largest application's oldest and newest messages' times
	newest  time.Time
	attempt string // an attempt of the newest message
}

// scaleReq is one request of the measure.
type scaleReq struct {
	name, path string
	cookie     bool // a dashboard or portal page (the session cookie), else the API (the token)
	want       int  // the status it answers; 0: 200
}

// Scale runs the measure.
func Scale(ctx context.Context, o ScaleOptions) (*ScaleReport, error) {
	if o.Rounds < 1 || o.BaseMessages < 1 {
		return nil, usageErrorf("", "--rounds and --base-messages must be at least 1")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	bin, err := apartBinary(o.HookdBinary)
	if err != nil {
		return nil, err
	}
	baseBin := bin
	if o.BaseBinary != "" {
		if baseBin, err = apartBinary(o.BaseBinary); err != nil {
			return nil, err
		}
	}
	full, err := parseScaleDB(o.DB, o.Schema)
	if err != nil {
		return nil, err
	}
	baseSpec, baseSchema := o.BaseDB, o.BaseSchema
	if baseSpec == "" {
		if full.pgURL != "" {
			u, _ := url.Parse(o.DB)
			u.Path += "_small"
			baseSpec = u.String()
		} else {
			dir, err := os.MkdirTemp("", "hookd-scale-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(dir)
			baseSpec = "sqlite:" + filepath.Join(dir, "small.db")
		}
	}
	base, err := parseScaleDB(baseSpec, baseSchema)
	if err != nil {
		return nil, err
	}
	// The baseline is filled when it holds nothing: a small database of the same shape.
	if err := base.create(ctx); err != nil {
		return nil, err
	}
	if n, err := messagesIn(ctx, base); err != nil || n == 0 {
		progress(o.Progress, "scale: filling %s with %d messages", base, o.BaseMessages)
		fo := DefaultFillOptions()
		fo.DB, fo.Schema, fo.Messages, fo.Logger = baseSpec, baseSchema, o.BaseMessages, logger
		if _, err := Fill(ctx, fo); err != nil {
			return nil, fmt.Errorf("fill the small database: %w", err)
		}
	}

	token := randomToken()
	rep := &ScaleReport{Rounds: o.Rounds}
	var servers []*scaleServer
	defer func() {
		for _, s := range servers {
			s.child.stop()
		}
	}()
	for _, side := range []struct {
		db   *scaleDB
		bin  string
		args []string
	}{{full, bin, o.serveArgs}, {base, baseBin, o.baseArgs}} {
		s := &scaleServer{db: side.db, token: token, side: ScaleSide{DB: side.db.String(), Binary: side.bin}}
		if err := s.pick(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", side.db, err)
		}
		progress(o.Progress, "scale: starting hookd serve (%s) on %s", side.bin, side.db)
		args := append([]string{"serve", "--listen", "127.0.0.1:0", "--allow-subnets", "127.0.0.0/8", "--retention", "none",
			"--db", side.db.serveDB()}, side.args...)
		env := append(os.Environ(), "HOOKD_TOKEN="+token)
		child, err := startFleetChild(ctx, "serve", side.bin, args, env)
		if err != nil {
			return nil, err
		}
		s.child = child
		servers = append(servers, s)
		if err := s.login(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", side.db, err)
		}
		s.reqs = s.requests()
	}
	rep.Full, rep.Base = servers[0].side, servers[1].side

	// Rounds: every request on one side, then the other, the first side alternating by round;
	// round 0 warms the caches and is not counted.
	n := len(servers[0].reqs)
	times := [2][][]time.Duration{make([][]time.Duration, n), make([][]time.Duration, n)}
	for round := 0; round <= o.Rounds; round++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		progress(o.Progress, "scale: round %d of %d", round, o.Rounds)
		for i := range n {
			for k := range 2 {
				side := (k + round) % 2
				s := servers[side]
				d, err := s.do(ctx, s.reqs[i])
				if err != nil {
					rep.Problems = append(rep.Problems, fmt.Sprintf("%s on %s: %v", s.reqs[i].name, s.side.DB, err))
					continue
				}
				if round > 0 {
					times[side][i] = append(times[side][i], d)
				}
			}
		}
		if len(rep.Problems) > 0 {
			break
		}
	}
	for i := range n {
		r := ScaleRequest{Name: servers[0].reqs[i].name, Path: servers[0].reqs[i].path,
			Full: latency(times[0][i]), Base: latency(times[1][i])}
		if r.Base.P50 > 0 {
			r.RatioP50 = r.Full.P50 / r.Base.P50
		}
		if r.Base.P95 > 0 {
			r.RatioP95 = r.Full.P95 / r.Base.P95
		}
		rep.Requests = append(rep.Requests, r)
	}
	for _, s := range servers {
		if err := s.child.stop(); err != nil {
			rep.Problems = append(rep.Problems, err.Error())
		}
	}
	servers = nil
	return rep, nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

func randomToken() string {
	var b [24]byte
	rand.Read(b[:])
	return "scale_" + hex.EncodeToString(b[:])
}

// messagesIn counts the messages of d; an error when it holds no hookd tables.
func messagesIn(ctx context.Context, d *scaleDB) (int64, error) {
	if d.sqlitePath != "" {
		if _, err := os.Stat(d.sqlitePath); err != nil {
			return 0, err
		}
	}
	q, err := d.query(ctx)
	if err != nil {
		return 0, err
	}
	defer q.close()
	return q.count(ctx, "SELECT count(*) FROM hookd_messages")
}

// pick reads the counts and what the requests name: the largest application, its catch-all
// endpoint (which gets every message of the application: the busiest), its newest message and
// an attempt of it, and its oldest and newest messages' times.
func (s *scaleServer) pick(ctx context.Context) error {
	q, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer q.close()
	if s.side.Counts, err = q.counts(ctx); err != nil {
		return err
	}
	if s.side.App, err = q.text(ctx, "SELECT id FROM hookd_applications WHERE uid = 'scale-000'"); err != nil {
		return fmt.Errorf("no application scale-000 (fill it with hookd bench fill): %w", err)
	}
	if s.side.Endpoint, err = q.text(ctx, "SELECT id FROM hookd_endpoints WHERE app_id = $1 AND uid = 'ep-0'", s.side.App); err != nil {
		return err
	}
	if s.side.Message, err = q.text(ctx, "SELECT id FROM hookd_messages WHERE app_id = $1 ORDER BY id DESC LIMIT 1", s.side.App); err != nil {
		return err
	}
	if s.attempt, err = q.text(ctx, "SELECT id FROM hookd_attempts WHERE message_id = $1 ORDER BY id LIMIT 1", s.side.Message); err != nil {
		return fmt.Errorf("no attempt of message %s: %w", s.side.Message, err)
	}
	oldest, err := q.text(ctx, "SELECT id FROM hookd_messages WHERE app_id = $1 ORDER BY id LIMIT 1", s.side.App)
	if err != nil {
		return err
	}
	if s.oldest, err = q.at(ctx, "SELECT created_at FROM hookd_messages WHERE id = $1", oldest); err != nil {
		return err
	}
	s.newest, err = q.at(ctx, "SELECT created_at FROM hookd_messages WHERE id = $1", s.side.Message)
	return err
}

// requests are the measure's requests, in the order of the table: every API list, filter,
// stats call and get of the largest application, then the dashboard's and the portal's pages.
func (s *scaleServer) requests() []scaleReq {
	app := "/api/v1/app/" + s.side.App
	ep := app + "/endpoint/" + s.side.Endpoint
	msg := app + "/msg/" + s.side.Message
	rfc := func(t time.Time) string { return url.QueryEscape(t.UTC().Format(time.RFC3339)) }
	ui := func(t time.Time) string { return url.QueryEscape(t.UTC().Format("2006-01-02T15:04")) }
	nearOldest := s.oldest.Add(time.Hour) // before it: the last page of the application's messages
	recent := s.newest.Add(-time.Hour)    // after it: the last hour's messages
	const typ, channel, tag = "order.shipped", "eu", "vip"
	attempts := app + "/attempt/endpoint/" + s.side.Endpoint
	uiApp := "/ui/app/" + s.side.App
	portalApp := "/portal/app/" + s.side.App
	return []scaleReq{
		{name: "API application list", path: "/api/v1/app"},
		{name: "API event type list", path: "/api/v1/event-type"},
		{name: "API application get", path: app},
		{name: "API endpoint list", path: app + "/endpoint"},
		{name: "API endpoint get", path: ep},
		{name: "API message list", path: app + "/msg"},
		{name: "API message list before near the oldest", path: app + "/msg?before=" + rfc(nearOldest)},
		{name: "API message list after a recent time", path: app + "/msg?after=" + rfc(recent)},
		{name: "API message list eventType+before", path: app + "/msg?event_types=" + typ + "&before=" + rfc(nearOldest)},
		{name: "API message list eventType", path: app + "/msg?event_types=" + typ},
		{name: "API message list channel", path: app + "/msg?channel=" + channel},
		{name: "API message list tag", path: app + "/msg?tag=" + tag},
		{name: "API message get", path: msg},
		{name: "API attempts of endpoint", path: attempts},
		{name: "API attempts of endpoint status=0", path: attempts + "?status=0"},
		{name: "API attempts of endpoint status=2", path: attempts + "?status=2"},
		{name: "API attempts of endpoint eventType", path: attempts + "?event_types=" + typ},
		{name: "API attempts of endpoint channel", path: attempts + "?channel=" + channel},
		{name: "API attempts of message", path: app + "/attempt/msg/" + s.side.Message},
		{name: "API attempts of message to endpoint", path: msg + "/endpoint/" + s.side.Endpoint + "/attempt"},
		{name: "API attempt get", path: msg + "/attempt/" + s.attempt},
		{name: "API attempted destinations", path: msg + "/endpoint"},
		{name: "API attempted messages", path: ep + "/msg"},
		{name: "API attempted messages status=2", path: ep + "/msg?status=2"},
		{name: "API endpoint stats (28 days)", path: ep + "/stats"},
		{name: "dashboard home", path: "/ui/", cookie: true},
		{name: "dashboard application", path: uiApp, cookie: true},
		{name: "dashboard application status=failed", path: uiApp + "?status=failed", cookie: true},
		{name: "dashboard application status=delivered", path: uiApp + "?status=delivered", cookie: true},
		{name: "dashboard application status=pending", path: uiApp + "?status=pending", cookie: true},
		{name: "dashboard application status=cancelled", path: uiApp + "?status=cancelled", cookie: true},
		{name: "dashboard application type", path: uiApp + "?type=" + typ, cookie: true},
		{name: "dashboard application to near the oldest", path: uiApp + "?to=" + ui(nearOldest), cookie: true},
		{name: "dashboard application from a recent time", path: uiApp + "?from=" + ui(recent), cookie: true},
		{name: "dashboard find message (303 to it)", path: uiApp + "/find?q=" + s.side.Message, cookie: true, want: http.StatusSeeOther},
		{name: "dashboard event types", path: uiApp + "/event-types", cookie: true},
		{name: "dashboard endpoint", path: uiApp + "/endpoint/" + s.side.Endpoint, cookie: true},
		{name: "dashboard message", path: uiApp + "/msg/" + s.side.Message, cookie: true},
		{name: "dashboard attempt", path: uiApp + "/msg/" + s.side.Message + "/attempt/" + s.attempt, cookie: true},
		{name: "portal application", path: portalApp, cookie: true},
		{name: "portal application status=failed", path: portalApp + "?status=failed", cookie: true},
		{name: "portal endpoint", path: portalApp + "/endpoint/" + s.side.Endpoint, cookie: true},
		{name: "portal message", path: portalApp + "/msg/" + s.side.Message, cookie: true},
	}
}

// login signs in to the dashboard with the admin token (POST /ui/login, as its form does) and
// opens the portal of the largest application with a portal link
// (POST /api/v1/auth/app-portal-access), keeping both session cookies.
func (s *scaleServer) login(ctx context.Context) error {
	jar, _ := cookiejar.New(nil)
	s.http = &http.Client{
		Jar:     jar,
		Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	form := url.Values{"token": {s.token}, "next": {"/ui/"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.child.url+"/ui/login", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.child.url)
	res, err := s.http.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("dashboard login: HTTP %d, want 303", res.StatusCode)
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, s.child.url+"/api/v1/auth/app-portal-access/"+s.side.App, bytes.NewReader([]byte(`{}`)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	res, err = s.http.Do(req)
	if err != nil {
		return err
	}
	var access struct {
		URL string `json:"url"`
	}
	err = json.NewDecoder(res.Body).Decode(&access)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || access.URL == "" {
		return fmt.Errorf("portal access: HTTP %d (%v)", res.StatusCode, err)
	}
	link, err := url.Parse(access.URL)
	if err != nil {
		return err
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, s.child.url+link.RequestURI(), nil)
	if err != nil {
		return err
	}
	res, err = s.http.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("portal link: HTTP %d, want 303", res.StatusCode)
	}
	return nil
}

// do makes one request and times it to the end of its body; a status other than r's is an error.
func (s *scaleServer) do(ctx context.Context, r scaleReq) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.child.url+r.path, nil)
	if err != nil {
		return 0, err
	}
	if !r.cookie {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	start := time.Now()
	res, err := s.http.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if want := cmp.Or(r.want, http.StatusOK); res.StatusCode != want {
		return 0, fmt.Errorf("GET %s: HTTP %d, want %d: %.300s", r.path, res.StatusCode, want, body)
	}
	return d, nil
}

func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return durMS(s[min(max(i, 0), len(s)-1)])
	}
	return Latency{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: durMS(s[len(s)-1])}
}

func durMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Text is the table for people.
func (r *ScaleReport) Text() string {
	var b strings.Builder
	side := func(name string, s ScaleSide) {
		c := s.Counts
		fmt.Fprintf(&b, "%s: %s (hookd %s): %d messages (largest application %d), %d deliveries, %d attempts\n",
			name, s.DB, s.Binary, c.Messages, c.LargestApp, c.Deliveries, c.Attempts)
	}
	side("full", r.Full)
	side("base", r.Base)
	fmt.Fprintf(&b, "%d rounds, requests alternated between the two; milliseconds, ratio = full ÷ base\n\n", r.Rounds)
	w := 0
	for _, q := range r.Requests {
		w = max(w, len(q.Name))
	}
	fmt.Fprintf(&b, "%-*s  %9s %9s %9s  %9s %9s %9s  %7s %7s\n", w, "request", "full p50", "p95", "p99", "base p50", "p95", "p99", "× p50", "× p95")
	for _, q := range r.Requests {
		fmt.Fprintf(&b, "%-*s  %9.1f %9.1f %9.1f  %9.1f %9.1f %9.1f  %7.2f %7.2f\n", w, q.Name,
			q.Full.P50, q.Full.P95, q.Full.P99, q.Base.P50, q.Base.P95, q.Base.P99, q.RatioP50, q.RatioP95)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	return b.String()
}
