package hookd

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hookd/hookd/delivery"
)

// DefaultRetrySchedule is the Standard Webhooks example schedule: after the first attempt, retries
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h apart (75 h 35 min 5 s in all).
var DefaultRetrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// DefaultMaxTimeout bounds the attempt timeout an endpoint or application may set (Config.MaxTimeout).
const DefaultMaxTimeout = 30 * time.Second

// Config configures a Client. The zero value (or nil) means every default.
type Config struct {
	// Logger receives the worker's logs; secrets never reach it. Default: discard.
	Logger *slog.Logger
	// EnqueueOnly says that the client only writes messages and never works their delivery jobs:
	// another process does (hookd serve --role worker, or a started Client on the same database
	// or queue). Start then returns an error, and the client does not warn that its deliveries
	// wait on a client never started. Default: false.
	EnqueueOnly bool
	// Queue carries jobs. Default: the store's own queue (in the same database: hookd_jobs for SQLite).
	Queue Queue
	// Workers is the number of attempts in flight in each lane. Default: 100 first, 50 retry,
	// 10 manual.
	Workers map[Lane]int
	// ActiveWorkers bounds the jobs of each lane that are busy at once: a job holds one of these
	// places until it ends or has run for 10 ms, after which it is waiting on a slow receiver
	// and gives its place back. So receivers that answer at once do not get every worker at once
	// contending for the CPU and the database, while slow ones still get all Workers. Default:
	// 4 per CPU with a store whose database runs in this process (SQLite), no bound with one
	// that runs apart (PostgreSQL), where jobs mostly wait on it; negative: no bound.
	ActiveWorkers int
	// Delivery configures the HTTP client (timeout, response cap, SSRF allow-list, proxy).
	// Default: delivery's defaults (15 s timeout, 4 KiB, guard on).
	Delivery *delivery.Config
	// RetrySchedule is the wait before each retry; its length is the number of retries.
	// Default: DefaultRetrySchedule.
	RetrySchedule []time.Duration
	// Jitter spreads each wait by up to this fraction either way. Default: 0.2; negative: none.
	Jitter float64
	// ThrottleFloor is the least wait after a 429, 502 or 504 (or a Retry-After), during which
	// the endpoint gets no attempt. Default: 60 s.
	ThrottleFloor time.Duration
	// MaxRetryAfter bounds how long a Retry-After may push a retry out. Default: 24 h.
	MaxRetryAfter time.Duration
	// MaxInFlightPerEndpoint caps attempts in flight to one endpoint; more are snoozed. An
	// endpoint's MaxInFlight overrides it. Default: 8; negative: no cap.
	MaxInFlightPerEndpoint int
	// SlotLease is how long this process holds the slots of an endpoint's cap it leases from the
	// other processes on the same database or Redis queue (see SlotLeaser), renewed every third
	// of it while the process lives: a process that dies keeps its slots this long. At least
	// MinSlotLease. Default: DefaultSlotLease (10 s); negative: no lease, each process keeps the
	// cap alone.
	SlotLease time.Duration
	// CircuitThreshold is the number of consecutive failures that opens an endpoint's circuit.
	// Default: 10; negative: no circuit breaker.
	CircuitThreshold int
	// CircuitCooldown is the first pause of an open circuit before one probe goes through; it
	// doubles after each failed probe, up to CircuitMaxCooldown. Default: 30 s.
	CircuitCooldown time.Duration
	// CircuitMaxCooldown bounds the pause. Default: 10 min.
	CircuitMaxCooldown time.Duration
	// DisableAfter disables an endpoint whose deliveries have failed, with no success, for this
	// long, when a delivery to it exhausts its retries. Default: 5 days; negative: never.
	DisableAfter time.Duration
	// RotationGrace is how long an endpoint's old key keeps signing after a rotation. Default: 24 h.
	RotationGrace time.Duration
	// MaxPayload bounds a message's payload in bytes. Default: 1 MiB.
	MaxPayload int
	// MaxEndpointsPerApp bounds an application's endpoints: one message goes to each of them, so
	// the bound is also the most deliveries one message makes. CreateEndpoint past it is
	// ErrTooManyEndpoints. Default: DefaultMaxEndpointsPerApp (100); negative: no limit.
	MaxEndpointsPerApp int
	// MessageRatePerApp bounds the messages each application may create per second (Send, SendTx,
	// SendToEndpoint), a token bucket per application in this process; a send past it is a
	// *RateLimitError (ErrRateLimited). Default: no limit (hookd serve sets
	// DefaultMessageRatePerApp).
	MessageRatePerApp float64
	// MessageBurstPerApp is how many messages an application may create at once above
	// MessageRatePerApp, after a pause. Default: one second's worth of MessageRatePerApp, at
	// least 1.
	MessageBurstPerApp int
	// MainKey, 32 bytes in base64, encrypts secrets at rest (AES-256-GCM): endpoints' signing
	// secrets, the values of their credential headers (SensitiveHeader) and the responses the
	// server keeps for an Idempotency-Key (an app-portal token, for one); the database then holds
	// no secret in clear. Values stored before it was set stay readable.
	// Keep it apart from the database; without it the secrets it sealed cannot be read.
	// Default: none, secrets stored as they are.
	MainKey string
	// MaxTimeout bounds the attempt timeout an endpoint or application sets (Endpoint.AttemptTimeout,
	// Application.AttemptTimeout); a larger one is a *ValidationError. It is at least the delivery
	// timeout. Default: DefaultMaxTimeout, or the delivery timeout when that is longer.
	MaxTimeout time.Duration
	// JobTimeout bounds one job (an attempt and its bookkeeping). Default: MaxTimeout plus 30 s.
	JobTimeout time.Duration
	// OperationalWebhookURL, when set, receives operational events (endpoint.created, .updated,
	// .deleted, .disabled, message.attempt.exhausted, .failing, .recovered) as signed webhooks,
	// through an application of its own (uid "hookd-operational"). Default: none (the events are
	// still recorded; see Client.ListOperationalEvents).
	OperationalWebhookURL string
	// OperationalWebhookSecret signs them (whsec_). Default: generated at the first Start; read it
	// with EndpointSecret(ctx, "hookd-operational", "operator").
	OperationalWebhookSecret string
	// SignatureHeaders names the Standard Webhooks signature headers of the endpoints of
	// SchemeStandard (those of SchemeSvix always get svix-* alone). Default (the zero value):
	// HeadersBoth, webhook-* and svix-* at once.
	SignatureHeaders SignatureHeaders
	// OnAttempt, when set, is called after each attempt is recorded, with the delivery's new
	// status (metrics hook). It must not block. Default: none.
	OnAttempt func(a *Attempt, status DeliveryStatus)
	// Retention, when set, is how long messages are kept: a started Client deletes those created
	// longer ago, with their deliveries and attempts, once none of their deliveries is pending
	// (retention.go). At least MinRetention. Default: 0, messages are kept forever.
	Retention time.Duration
	// Now is the clock; the times it gives are kept to the microsecond. Default: time.Now.
	Now func() time.Time
	// Rand returns a number in [0, 1) for jitter. Default: math/rand/v2.
	Rand func() float64
}

// withDefaults returns a copy of c with every default filled in.
func (c *Config) withDefaults() *Config {
	out := Config{}
	if c != nil {
		out = *c
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	out.Delivery = out.Delivery.WithDefaults()
	if out.Workers == nil {
		out.Workers = map[Lane]int{}
	}
	w := map[Lane]int{LaneFirst: 100, LaneRetry: 50, LaneManual: 10}
	for lane, n := range out.Workers {
		w[lane] = n
	}
	out.Workers = w
	if out.RetrySchedule == nil {
		out.RetrySchedule = DefaultRetrySchedule
	}
	if out.Jitter == 0 {
		out.Jitter = 0.2
	}
	if out.ThrottleFloor == 0 {
		out.ThrottleFloor = 60 * time.Second
	}
	if out.MaxRetryAfter == 0 {
		out.MaxRetryAfter = 24 * time.Hour
	}
	if out.MaxInFlightPerEndpoint == 0 {
		out.MaxInFlightPerEndpoint = 8
	}
	if out.SlotLease == 0 {
		out.SlotLease = DefaultSlotLease
	}
	if out.CircuitThreshold == 0 {
		out.CircuitThreshold = 10
	}
	if out.CircuitCooldown == 0 {
		out.CircuitCooldown = 30 * time.Second
	}
	if out.CircuitMaxCooldown == 0 {
		out.CircuitMaxCooldown = 10 * time.Minute
	}
	if out.DisableAfter == 0 {
		out.DisableAfter = 5 * 24 * time.Hour
	}
	if out.RotationGrace == 0 {
		out.RotationGrace = 24 * time.Hour
	}
	if out.MaxPayload == 0 {
		out.MaxPayload = 1 << 20
	}
	if out.MaxEndpointsPerApp == 0 {
		out.MaxEndpointsPerApp = DefaultMaxEndpointsPerApp
	}
	if out.MessageBurstPerApp == 0 && out.MessageRatePerApp > 0 {
		out.MessageBurstPerApp = max(int(math.Ceil(out.MessageRatePerApp)), 1)
	}
	if out.MaxTimeout == 0 {
		out.MaxTimeout = max(DefaultMaxTimeout, out.Delivery.Timeout)
	}
	if out.JobTimeout == 0 {
		out.JobTimeout = out.MaxTimeout + 30*time.Second
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.Rand == nil {
		out.Rand = rand.Float64
	}
	return &out
}

// validate says what is wrong with a defaulted config and how to fix it.
func (c *Config) validate() error {
	for i, d := range c.RetrySchedule {
		if d < 0 {
			return fmt.Errorf("hookd: Config.RetrySchedule[%d] is %s: waits must be zero or positive", i, d)
		}
	}
	if c.Retention != 0 && c.Retention < MinRetention {
		return fmt.Errorf("hookd: Config.Retention is %s: keep messages at least %s, or leave it 0 to keep them forever", c.Retention, MinRetention)
	}
	if c.Jitter >= 1 {
		return fmt.Errorf("hookd: Config.Jitter is %g: use a fraction below 1 (0.2 spreads waits by ±20%%)", c.Jitter)
	}
	for lane, n := range c.Workers {
		if n < 1 {
			return fmt.Errorf("hookd: Config.Workers[%s] is %d: each lane needs at least one worker", lane, n)
		}
	}
	if c.SlotLease > 0 && c.SlotLease < MinSlotLease {
		return fmt.Errorf("hookd: Config.SlotLease is %s: use at least %s, or leave it 0 for %s", c.SlotLease, MinSlotLease, DefaultSlotLease)
	}
	if c.CircuitMaxCooldown < c.CircuitCooldown {
		return fmt.Errorf("hookd: Config.CircuitMaxCooldown (%s) is below CircuitCooldown (%s)", c.CircuitMaxCooldown, c.CircuitCooldown)
	}
	if c.SignatureHeaders < HeadersBoth || c.SignatureHeaders > HeadersSvix {
		return fmt.Errorf("hookd: Config.SignatureHeaders is %v: use HeadersBoth, HeadersWebhook or HeadersSvix", c.SignatureHeaders)
	}
	if c.MessageRatePerApp < 0 || math.IsNaN(c.MessageRatePerApp) {
		return fmt.Errorf("hookd: Config.MessageRatePerApp is %g: use messages per second above zero, or zero for no limit", c.MessageRatePerApp)
	}
	if c.MessageRatePerApp > 0 && c.MessageBurstPerApp < 1 {
		return fmt.Errorf("hookd: Config.MessageBurstPerApp is %d: use at least 1 (or 0 for one second's worth)", c.MessageBurstPerApp)
	}
	if c.MaxTimeout < c.Delivery.Timeout {
		return fmt.Errorf("hookd: Config.MaxTimeout (%s) is below the delivery timeout (%s): raise it, or leave it 0", c.MaxTimeout, c.Delivery.Timeout)
	}
	if c.JobTimeout <= c.MaxTimeout {
		return fmt.Errorf("hookd: Config.JobTimeout (%s) must exceed MaxTimeout (%s), the longest attempt", c.JobTimeout, c.MaxTimeout)
	}
	return nil
}
