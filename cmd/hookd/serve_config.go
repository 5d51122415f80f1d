package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/hookd/hookd/cmd/hookd/internal/servedefaults"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/signature"
	"github.com/hookd/hookd/ui"
)

const serveUsage = `serve [--listen ADDR] [--db sqlite:PATH|postgres://...] [--queue redis://...]
             [--queue-namespace NAME] [--sweep-after D] [--role all|api|worker]
             [--token TOKEN] [--allow-subnets CIDRS]
             [--retry-schedule WAITS] [--timeout D] [--max-timeout D] [--workers N]
             [--slot-lease D]
             [--max-payload SIZE]
             [--retention DAYS|none]
             [--main-key KEY] [--signature-headers both|webhook|svix]
             [--max-endpoints-per-app N] [--max-messages-per-second-per-app RATE]
             [--message-burst-per-app N] [--metrics-listen ADDR] [--metrics-token TOKEN]
             [--log-format text|json] [--log-level LEVEL]
             [--public-url URL] [--portal-frame-ancestors ORIGINS]
             [--portal-title TITLE] [--portal-logo-url URL] [--portal-accent #RRGGBB]

Runs hookd: the workers that deliver webhooks and the HTTP API (Svix-compatible, under
/api/v1, bearer token), with /metrics (Prometheus text format) and /api/v1/health (no
token) on the same address. /metrics names applications and endpoints: give it an
address of its own (--metrics-listen, e.g. on a private interface) or a token
(--metrics-token, sent as Authorization: Bearer), or both.

Every flag may come from its environment variable instead (named in each flag's
help); a flag beats its variable, a variable beats the default. A wrong value stops
start-up with exit code 2.

Without --token, the first start generates an admin token and prints it once on
stderr; only its hash is stored, and later starts keep it. --token replaces it; it
needs at least 32 characters (make one with: openssl rand -hex 32). Pass the token,
--main-key and --metrics-token through their environment variables (HOOKD_TOKEN,
HOOKD_MAIN_KEY, HOOKD_METRICS_TOKEN), not as flags: flags show in ps to every user
of the machine.

Each application may have at most --max-endpoints-per-app endpoints (default 100;
a create past it is a 422) and create at most --max-messages-per-second-per-app
messages (default 1000 per second, after a burst of --message-burst-per-app; a send
past it is a 429 with Retry-After). The message rate is counted in each process: N
API processes behind one address allow N times it.

--public-url is the address users reach hookd at (e.g. behind a TLS proxy): portal
links are built on it, forms must come from it, and with https the cookies are
Secure. Without it, portal links are on the address the request came in on (the
listener's, never the Host header) and forms must come from the request's own
origin. --portal-frame-ancestors names the sites that may show the portal in an
iframe; it needs an https --public-url for the portal's cookie to work there.
--portal-title, --portal-logo-url and --portal-accent show the portal under your
name, logo and colour.

--workers N sets the attempts in flight: N for first attempts, N/2 for retries,
N/10 for manual attempts (at least 1 each). Unset, N is sized to the machine: 50 per
CPU, at most 400 (here: %d).

Several processes share one PostgreSQL database: each attempt is made by one of them.
--role api runs only the HTTP API, --role worker only the workers (with /metrics and
/api/v1/health); they need PostgreSQL. SQLite is one process's file: --role all only.

With --queue, the jobs wait in Redis and the deliveries stay in the database. A
pending delivery whose job Redis lost (a Redis restarted empty, a crash between a
commit and its enqueue) is enqueued again by the sweeper once it is --sweep-after
past due. The sweeper runs at start and then every half of --sweep-after, at most
every 30 s.

On SIGTERM or SIGINT: stops taking requests (waiting up to 10 s for those in
flight), waits for the attempts in flight (up to --max-timeout + 5 s; an unfinished one
is made again on the next start), closes the database and exits 0.`

// serveConfig is the configuration of "hookd serve", parsed and checked.
type serveConfig struct {
	listen         string
	db             dbTarget
	queueURL       string // redis:// or rediss://; empty: the database's own queue
	queueNamespace string // empty: derived from the database
	sweepAfter     time.Duration
	role           string
	token          string // empty: keep the stored admin token, or generate one
	allowSubnets   []netip.Prefix
	retrySchedule  []time.Duration // nil: hookd.DefaultRetrySchedule
	timeout        time.Duration
	maxTimeout     time.Duration // the longest attempt timeout an endpoint or application may set
	workers        map[hookd.Lane]int
	slotLease      time.Duration // how long a process holds the endpoint slots it leases
	maxPayload     int
	retention      time.Duration // messages kept; 0: forever
	logJSON        bool
	logLevel       slog.Level
	opsURL         string // operational webhooks; empty: none
	opsSecret      string
	mainKey        string // encrypts endpoint secrets at rest; empty: none
	sigHeaders     hookd.SignatureHeaders
	maxEndpoints   int     // per application; -1: no limit
	messageRate    float64 // per application and second; 0: no limit
	messageBurst   int     // 0: one second of messageRate
	metricsListen  string  // empty: /metrics on --listen
	metricsToken   string  // empty: /metrics answers without a token

	publicURL      string   // the pages' and portal links' address; empty: as the request came in
	frameAncestors []string // origins that may frame the portal; nil: none
	portalTitle    string   // empty: ui.DefaultPortalTitle
	portalLogo     string   // an https URL or a path; empty: none
	portalAccent   string   // #rrggbb; empty: the dashboard's
}

// setting is one flag of serve, the environment variables it may come from, and its parser.
type setting struct {
	name  string   // the flag, without dashes
	envs  []string // the variables read when the flag is not given, first set wins
	def   string   // the default; "" when the parser gives it
	usage string
	parse func(c *serveConfig, v string) error // the error says what the flag accepts

	value *string // the flag's value once registered
}

// serveSettings are serve's flags, in the order their values are checked.
func serveSettings() []*setting {
	return []*setting{
		{name: "listen", envs: []string{"HOOKD_LISTEN"}, def: "127.0.0.1:8071",
			usage: "`ADDR` (host:port) to serve the API and /metrics on; port 0 picks a free one",
			parse: parseListen},
		{name: "db", envs: []string{"HOOKD_DB", "DATABASE_URL"}, def: "sqlite:hookd.db",
			usage: "the database: sqlite:`PATH` (or a bare path), or postgres://USER@HOST:PORT/DATABASE",
			parse: parseDB},
		{name: "queue", envs: []string{"HOOKD_QUEUE", "REDIS_URL"},
			usage: "a Redis `URL` (redis:// or rediss://, with user, password and database number) to queue jobs on, swept from the database (default: the database's own queue)",
			parse: parseQueue},
		{name: "queue-namespace", envs: []string{"HOOKD_QUEUE_NAMESPACE"},
			usage: "the `NAME` that keeps this installation's tasks apart on a shared Redis (default: derived from --db)",
			parse: parseNamespace},
		{name: "sweep-after", envs: []string{"HOOKD_SWEEP_AFTER"}, def: "1m",
			usage: "with --queue, how long past due (`DURATION`, at least 1s) a pending delivery must be before the sweeper enqueues its job again; the sweeper runs every half of it, at most every 30s",
			parse: parseSweepAfter},
		{name: "role", envs: []string{"HOOKD_ROLE"}, def: "all",
			usage: "what this process runs (`ROLE`): all, api (the HTTP API, no workers) or worker (the workers, with /metrics and health only)",
			parse: parseRole},
		{name: "token", envs: []string{"HOOKD_TOKEN"},
			usage: "the admin bearer `TOKEN`, at least 32 characters (make one with: openssl rand -hex 32), replacing the stored one; pass it through the environment, since flags show in ps (default: generated on the first start and printed once)",
			parse: parseToken},
		{name: "allow-subnets", envs: []string{"HOOKD_ALLOW_SUBNETS"},
			usage: "comma-separated `CIDRS` that endpoints may resolve to despite the SSRF guard, e.g. 10.0.0.0/8 (default none: private, loopback and link-local addresses are refused)",
			parse: parseAllowSubnets},
		{name: "retry-schedule", envs: []string{"HOOKD_RETRY_SCHEDULE"}, def: "5s,5m,30m,2h,5h,10h,14h,20h,24h",
			usage: "comma-separated `WAITS` before each retry (their number is the number of retries), or none",
			parse: parseRetrySchedule},
		{name: "timeout", envs: []string{"HOOKD_TIMEOUT"}, def: "15s",
			usage: "the longest one attempt may take (`DURATION`), connecting and reading the response included",
			parse: parseTimeout},
		{name: "max-timeout", envs: []string{"HOOKD_MAX_TIMEOUT"}, def: "30s",
			usage: "the longest attempt timeout (`DURATION`) an endpoint or application may set for itself (timeoutSeconds); at least --timeout",
			parse: parseMaxTimeout},
		{name: "workers", envs: []string{"HOOKD_WORKERS"},
			usage: fmt.Sprintf("`N` first attempts in flight, N/2 retries, N/10 manual (default: 50 per CPU, at most 400; here %d)", servedefaults.DefaultWorkers()),
			parse: parseWorkers},
		{name: "slot-lease", envs: []string{"HOOKD_SLOT_LEASE"}, def: "10s",
			usage: "with PostgreSQL or --queue, how long (`DURATION`, at least 1s) a worker process holds the slots of an endpoint's cap it leases, renewed every third of it: the cap holds across processes, and a process that dies keeps its slots this long",
			parse: parseSlotLease},
		{name: "max-payload", envs: []string{"HOOKD_MAX_PAYLOAD"}, def: "1MiB",
			usage: "the largest message payload (`SIZE`): bytes, or a number with KiB, MiB, KB or MB",
			parse: parseMaxPayload},
		{name: "retention", envs: []string{"HOOKD_RETENTION"}, def: "90d",
			usage: "how long messages and their attempts are kept (`DAYS`, e.g. 90d, or a duration such as 720h; at least 1d), or none to keep them forever; a message whose delivery is still pending is kept until it ends",
			parse: parseRetention},
		{name: "operational-webhook-url", envs: []string{"HOOKD_OPERATIONAL_WEBHOOK_URL"},
			usage: "`URL` that receives operational webhooks (endpoint.disabled, message.attempt.exhausted, ...), signed (default none)",
			parse: parseOpsURL},
		{name: "operational-webhook-secret", envs: []string{"HOOKD_OPERATIONAL_WEBHOOK_SECRET"},
			usage: "whsec_ `SECRET` that signs operational webhooks (default: generated once; read it with \"hookd endpoint secret hookd-operational operator\")",
			parse: parseOpsSecret},
		{name: "main-key", envs: []string{"HOOKD_MAIN_KEY"},
			usage: "32 bytes in base64 (`KEY`, e.g. from openssl rand -base64 32) that encrypt secrets at rest (endpoint secrets and credential headers, responses kept for an Idempotency-Key); keep it apart from the database and pass it through the environment, since flags show in ps (default none: secrets stored as they are)",
			parse: parseMainKey},
		{name: "signature-headers", envs: []string{"HOOKD_SIGNATURE_HEADERS"}, def: "both",
			usage: "the names the Standard Webhooks signature is sent under (`SET`): both (webhook-* and svix-*, for every receiver library), webhook (webhook-id, webhook-timestamp, webhook-signature) or svix (svix-id, svix-timestamp, svix-signature, as Svix's server sends)",
			parse: parseSignatureHeaders},
		{name: "max-endpoints-per-app", envs: []string{"HOOKD_MAX_ENDPOINTS_PER_APP"}, def: strconv.Itoa(hookd.DefaultMaxEndpointsPerApp),
			usage: "the most endpoints (`N`) one application may have, or none for no limit; one message goes to each of them",
			parse: parseMaxEndpoints},
		{name: "max-messages-per-second-per-app", envs: []string{"HOOKD_MAX_MESSAGES_PER_SECOND_PER_APP"}, def: strconv.Itoa(hookd.DefaultMessageRatePerApp),
			usage: "the messages per second (`RATE`) one application may create in this process, or none for no limit; past it, 429 with Retry-After",
			parse: parseMessageRate},
		{name: "message-burst-per-app", envs: []string{"HOOKD_MESSAGE_BURST_PER_APP"},
			usage: "how many messages (`N`) one application may create at once above the rate, after a pause (default: one second of --max-messages-per-second-per-app)",
			parse: parseMessageBurst},
		{name: "metrics-listen", envs: []string{"HOOKD_METRICS_LISTEN"},
			usage: "`ADDR` (host:port) to serve /metrics on instead of --listen, which then does not serve it (default: --listen)",
			parse: parseMetricsListen},
		{name: "metrics-token", envs: []string{"HOOKD_METRICS_TOKEN"},
			usage: "the bearer `TOKEN` (at least 32 characters) a scrape of /metrics must send as Authorization: Bearer; pass it through the environment (default none: /metrics answers every scrape)",
			parse: parseMetricsToken},
		{name: "public-url", envs: []string{"HOOKD_PUBLIC_URL"},
			usage: "the `URL` users reach hookd at, scheme and host (e.g. https://hooks.example.com behind a TLS proxy): portal links are built on it, and with https the cookies are Secure (default: the address a request came in on)",
			parse: parsePublicURL},
		{name: "portal-frame-ancestors", envs: []string{"HOOKD_PORTAL_FRAME_ANCESTORS"}, def: "'none'",
			usage: "the `ORIGINS` (e.g. https://app.example.com, separated by spaces or commas) that may show the customer portal in an iframe, or 'none'",
			parse: parseFrameAncestors},
		{name: "portal-title", envs: []string{"HOOKD_PORTAL_TITLE"},
			usage: "the customer portal's `TITLE`, in its header and page titles, at most 80 characters (default \"" + ui.DefaultPortalTitle + "\")",
			parse: parsePortalTitle},
		{name: "portal-logo-url", envs: []string{"HOOKD_PORTAL_LOGO_URL"},
			usage: "the `URL` of a logo in the customer portal's header: https (its origin is allowed in the portal's CSP img-src) or a path on this server (default none)",
			parse: parsePortalLogo},
		{name: "portal-accent", envs: []string{"HOOKD_PORTAL_ACCENT"},
			usage: "the customer portal's accent `COLOUR`, as #rrggbb (default hookd's blue)",
			parse: parsePortalAccent},
		{name: "log-format", envs: []string{"HOOKD_LOG_FORMAT"}, def: "text",
			usage: "log lines on stderr as `FORMAT`: text or json",
			parse: parseLogFormat},
		{name: "log-level", envs: []string{"HOOKD_LOG_LEVEL"}, def: "info",
			usage: "the least `LEVEL` logged: debug, info, warn or error",
			parse: parseLogLevel},
	}
}

// parseServeConfig reads serve's flags from args and, for each flag not given, its environment
// variable (through lookupEnv) or its default.
func parseServeConfig(e *env, args []string, lookupEnv func(string) (string, bool)) (*serveConfig, error) {
	settings := serveSettings()
	f := newFlags(e, "serve", fmt.Sprintf(serveUsage, servedefaults.DefaultWorkers()))
	for _, s := range settings {
		usage := s.usage + " (env " + strings.Join(s.envs, ", or ") + ")"
		s.value = f.String(s.name, s.def, usage)
	}
	if err := f.parse(args); err != nil {
		return nil, err
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })

	c := &serveConfig{workers: servedefaults.Lanes(servedefaults.DefaultWorkers())}
	hint := `run "hookd serve --help" for the flags and what they accept`
	for _, s := range settings {
		v, from := *s.value, "--"+s.name
		if !given[s.name] {
			for _, name := range s.envs {
				if ev, ok := lookupEnv(name); ok && ev != "" {
					v, from = ev, name+" (for --"+s.name+")"
					break
				}
			}
		}
		if v == "" && s.def == "" && !given[s.name] {
			continue // no default to parse: the zero value stands
		}
		if err := s.parse(c, v); err != nil {
			shown := strconv.Quote(v)
			if s.name == "token" || s.name == "operational-webhook-secret" || s.name == "main-key" || s.name == "metrics-token" {
				shown = "" // never echo a secret
			} else if s.name == "db" {
				shown = strconv.Quote(redact.URL(v))
			}
			if shown != "" {
				shown = " " + shown
			}
			return nil, usageErrorf(hint, "%s%s: %v", from, shown, err)
		}
	}
	// A split role needs a second process on the same database, and an SQLite file is one
	// process's: an API alone would accept messages that no worker ever delivers.
	if c.role != roleAll && c.db.postgresURL == "" {
		return nil, usageErrorf("use --db postgres://... for split roles, or --role all (the default) on SQLite",
			"--role %s: split roles need PostgreSQL; SQLite (%s) is one process's file", c.role, c.db)
	}
	return c, nil
}

func parseListen(c *serveConfig, v string) error {
	if err := checkListen(v); err != nil {
		return err
	}
	c.listen = v
	return nil
}

// checkListen accepts HOST:PORT.
func checkListen(v string) error {
	host, port, err := net.SplitHostPort(v)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || strings.ContainsAny(host, " /") {
		return errors.New("use HOST:PORT, e.g. 127.0.0.1:8071, :8071 (every interface) or 127.0.0.1:0 (a free port)")
	}
	return nil
}

// minTokenLen is the least length of --token and --metrics-token: 32 characters of hex carry
// 128 bits, more than anyone can guess through the API.
const minTokenLen = 32

func parseToken(c *serveConfig, v string) error {
	if err := checkToken(v); err != nil {
		return err
	}
	c.token = v
	return nil
}

// checkToken accepts a bearer token of at least minTokenLen printable ASCII characters.
func checkToken(v string) error {
	for _, r := range v {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return errors.New("use printable ASCII without spaces (it travels in an Authorization header)")
		}
	}
	if len(v) < minTokenLen {
		return fmt.Errorf("is %d characters, use at least %d; make one with: openssl rand -hex 32 (and pass it through the environment: flags show in ps)", len(v), minTokenLen)
	}
	return nil
}

func parseMetricsToken(c *serveConfig, v string) error {
	if v == "" {
		return nil
	}
	if err := checkToken(v); err != nil {
		return err
	}
	c.metricsToken = v
	return nil
}

func parseMetricsListen(c *serveConfig, v string) error {
	if v == "" {
		return nil
	}
	if err := checkListen(v); err != nil {
		return err
	}
	c.metricsListen = v
	return nil
}

// maxQuota bounds the numbers of the quota flags.
const maxQuota = 1_000_000_000

func parseMaxEndpoints(c *serveConfig, v string) error {
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		c.maxEndpoints = -1
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxQuota {
		return fmt.Errorf("use a whole number from 1 to %d, or none for no limit", maxQuota)
	}
	c.maxEndpoints = n
	return nil
}

func parseMessageRate(c *serveConfig, v string) error {
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		c.messageRate = 0
		return nil
	}
	r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(r > 0) || r > maxQuota {
		return fmt.Errorf("use messages per second above 0 and up to %d (e.g. 1000 or 0.5), or none for no limit", maxQuota)
	}
	c.messageRate = r
	return nil
}

func parseMessageBurst(c *serveConfig, v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxQuota {
		return fmt.Errorf("use a whole number from 1 to %d", maxQuota)
	}
	c.messageBurst = n
	return nil
}

func parseAllowSubnets(c *serveConfig, v string) error {
	c.allowSubnets = nil
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return errors.New("not a CIDR, e.g. 127.0.0.0/8,10.0.0.0/8")
		}
		c.allowSubnets = append(c.allowSubnets, p.Masked())
	}
	return nil
}

func parseRetrySchedule(c *serveConfig, v string) error {
	const accepts = "use waits separated by commas, e.g. 5s,5m,30m,2h, or none for no retries"
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		c.retrySchedule = []time.Duration{}
		return nil
	}
	var out []time.Duration
	for part := range strings.SplitSeq(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a wait; %s", part, accepts)
		}
		out = append(out, d)
	}
	c.retrySchedule = out
	return nil
}

func parseTimeout(c *serveConfig, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return errors.New("use a duration above zero, e.g. 15s or 1m30s")
	}
	c.timeout = d
	return nil
}

func parseMaxTimeout(c *serveConfig, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return errors.New("use a duration above zero, e.g. 30s or 2m")
	}
	c.maxTimeout = d
	return nil
}

func parseSlotLease(c *serveConfig, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < hookd.MinSlotLease {
		return fmt.Errorf("use a duration of at least %s, e.g. 10s", hookd.MinSlotLease)
	}
	c.slotLease = d
	return nil
}

// longestAttempt is the longest one attempt may take: --max-timeout, or --timeout when longer.
func (c *serveConfig) longestAttempt() time.Duration { return max(c.maxTimeout, c.timeout) }

// parseRetention reads --retention: a number of days with d, a Go duration, or none.
func parseRetention(c *serveConfig, v string) error {
	if v == "none" {
		c.retention = 0
		return nil
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
		if n > 100*365 {
			err = errors.New("too long")
		}
	}
	if err != nil || d < hookd.MinRetention {
		return errors.New("use a number of days of at least 1 (e.g. 90d), a duration of at least 24h, or none")
	}
	c.retention = d
	return nil
}

// maxWorkers bounds --workers.
const maxWorkers = 10000

func parseWorkers(c *serveConfig, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxWorkers {
		return fmt.Errorf("use a whole number from 1 to %d (first attempts in flight)", maxWorkers)
	}
	c.workers = servedefaults.Lanes(n)
	return nil
}

// maxPayloadLimit bounds --max-payload.
const maxPayloadLimit = 64 << 20

func parseMaxPayload(c *serveConfig, v string) error {
	accepts := "use a size from 1 byte to 64MiB, e.g. 1048576, 512KiB or 1MiB"
	s := strings.TrimSpace(v)
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return errors.New(accepts)
	}
	unit := map[string]int64{"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "kb": 1000, "mb": 1000 * 1000}
	mult, ok := unit[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok || n < 1 || n > maxPayloadLimit/mult {
		return errors.New(accepts)
	}
	c.maxPayload = int(n * mult)
	return nil
}

func parseLogFormat(c *serveConfig, v string) error {
	switch strings.ToLower(v) {
	case "text":
		c.logJSON = false
	case "json":
		c.logJSON = true
	default:
		return errors.New("use text or json")
	}
	return nil
}

func parseLogLevel(c *serveConfig, v string) error {
	switch strings.ToLower(v) {
	case "debug":
		c.logLevel = slog.LevelDebug
	case "info":
		c.logLevel = slog.LevelInfo
	case "warn", "warning":
		c.logLevel = slog.LevelWarn
	case "error":
		c.logLevel = slog.LevelError
	default:
		return errors.New("use debug, info, warn or error")
	}
	return nil
}

func parseOpsURL(c *serveConfig, v string) error {
	if v == "" {
		return nil
	}
	if err := delivery.ValidateURL(v); err != nil {
		return fmt.Errorf("%v; give the http(s) URL of your operations receiver", err)
	}
	c.opsURL = v
	return nil
}

func parseMainKey(c *serveConfig, v string) error {
	if v == "" {
		return nil
	}
	if err := hookd.CheckMainKey(v); err != nil {
		return errors.New("not 32 bytes in base64; make one with: openssl rand -base64 32")
	}
	c.mainKey = v
	return nil
}

func parseOpsSecret(c *serveConfig, v string) error {
	if v == "" {
		return nil
	}
	if _, err := signature.NewSigner(v); err != nil {
		return fmt.Errorf("not a signing secret (%v); \"hookd secret new\" makes one", err)
	}
	c.opsSecret = v
	return nil
}

func parseSignatureHeaders(c *serveConfig, v string) error {
	h, err := hookd.ParseSignatureHeaders(strings.ToLower(strings.TrimSpace(v)))
	if err != nil {
		return errors.New("use both, webhook or svix")
	}
	c.sigHeaders = h
	return nil
}

func parsePublicURL(c *serveConfig, v string) error {
	if v == "" {
		return nil
	}
	u, err := server.ParsePublicURL(v)
	if err != nil {
		return err
	}
	c.publicURL = u.String()
	return nil
}

func parsePortalTitle(c *serveConfig, v string) (err error) {
	c.portalTitle, err = ui.ParsePortalTitle(v)
	return err
}

func parsePortalLogo(c *serveConfig, v string) (err error) {
	c.portalLogo, err = ui.ParsePortalLogoURL(v)
	return err
}

func parsePortalAccent(c *serveConfig, v string) (err error) {
	c.portalAccent, err = ui.ParsePortalAccent(v)
	return err
}

func parseFrameAncestors(c *serveConfig, v string) error {
	origins, err := ui.ParseFrameAncestors(v)
	if err != nil {
		return err
	}
	c.frameAncestors = origins
	return nil
}
