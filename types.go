package hookd

import (
	"encoding/json"
	"time"
)

// Application is one customer of the API producer: the owner of endpoints and messages.
type Application struct {
	ID   string // "app_..."
	UID  string // the producer's own id for the customer; optional, unique. Any printable text.
	Name string
	// ThrottleRate caps the messages per second sent to each of the application's endpoints that
	// sets no rate of its own. Zero: no cap.
	ThrottleRate int
	Metadata     map[string]string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// SignatureScheme is how an endpoint's deliveries are signed.
type SignatureScheme string

const (
	// SchemeStandard is Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature (v1
	// HMAC-SHA256, or v1a ed25519 for whsk_ keys), and the same under svix-* names, as
	// Config.SignatureHeaders says. The default.
	SchemeStandard SignatureScheme = "standard"
	// SchemeSvix is Standard Webhooks under the svix-id, svix-timestamp, svix-signature names.
	SchemeSvix SignatureScheme = "svix"
	// SchemeStripe is the Stripe-shaped scheme: X-Webhook-Signature: t=<unix>,v1=<hex>,
	// repeated as Stripe-Signature for Stripe's libraries, with X-Webhook-Event and
	// X-Webhook-Timestamp.
	SchemeStripe SignatureScheme = "stripe"
	// SchemeEnvelope is the whole envelope format: the body is the envelope {"id", "type",
	// "occurredAt", "data"} (id: the message's event id, or its id; occurredAt: when the message
	// was created, RFC 3339 in UTC to the millisecond; data: the payload), signed as SchemeStripe.
	SchemeEnvelope SignatureScheme = "envelope"
)

// Endpoint is one URL of an application that receives its messages.
type Endpoint struct {
	ID          string // "ep_..."
	AppID       string
	UID         string // optional, unique within the application
	URL         string
	Description string
	Version     int
	// EventTypes filters the messages the endpoint receives; empty means every event type.
	EventTypes []string
	// Channels filters by channel: when set, a message is delivered only if it names one of them.
	Channels []string
	Disabled bool
	// DisabledReason says why the endpoint was disabled ("manual", "gone (HTTP 410)", ...).
	DisabledReason string
	DisabledAt     *time.Time
	// RateLimit caps messages per second to the endpoint (Svix's throttleRate). Zero: the
	// application's ThrottleRate, else no cap.
	RateLimit int
	// MaxInFlight caps attempts in flight to the endpoint. Zero: Config.MaxInFlightPerEndpoint.
	MaxInFlight int
	// Headers are added to every request to the endpoint.
	Headers  map[string]string
	Scheme   SignatureScheme
	Metadata map[string]string

	CreatedAt time.Time
	UpdatedAt time.Time

	// Health, kept by the worker.
	LastAttemptAt       *time.Time
	LastStatus          int    // HTTP status of the last attempt; 0 when none arrived
	LastError           string // the last attempt's failure, empty after a success
	LastSuccessAt       *time.Time
	FailingSince        *time.Time // the first failure after the last success
	ConsecutiveFailures int
}

// SigningKey is one of an endpoint's secrets. Every unexpired key signs, so during a rotation
// receivers holding the old or the new secret both verify.
type SigningKey struct {
	Secret    string // whsec_ (HMAC) or whsk_ (ed25519)
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: does not expire
}

// EventType is an entry in the producer's catalogue of event types.
type EventType struct {
	Name        string
	Description string
	Schemas     json.RawMessage // JSON Schema by version, as Svix stores it; may be nil
	// FeatureFlags hide the event type from app-portal tokens that hold none of them (hookd's
	// tokens hold none); empty: every token sees it.
	FeatureFlags []string
	// FeatureFlag is the first of FeatureFlags, the one flag of the open-source Svix server. Set
	// alone, with FeatureFlags empty, it is the list of one flag.
	FeatureFlag string
	GroupName   string // the group the event type is shown in (Svix's groupName); "" for none
	Deprecated  bool   // still sent, but marked for consumers as on its way out
	Archived    bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Flags returns the event type's feature flags: FeatureFlags, or FeatureFlag alone when
// FeatureFlags is empty.
func (et *EventType) Flags() []string {
	switch {
	case len(et.FeatureFlags) > 0:
		return et.FeatureFlags
	case et.FeatureFlag != "":
		return []string{et.FeatureFlag}
	}
	return nil
}

// Message is one event sent to one application.
type Message struct {
	ID        string // "msg_..."
	AppID     string
	EventID   string // the producer's idempotency id; optional, unique within the application
	EventType string
	Channels  []string
	// Tags are free-form labels the message list filters by (Svix's tags).
	Tags      []string
	Payload   json.RawMessage
	CreatedAt time.Time
	// PayloadExpiresAt is when the payload is deleted (Svix's payload retention); nil: kept until
	// it is expunged.
	PayloadExpiresAt *time.Time
}

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"   // attempts remain
	DeliveryDelivered DeliveryStatus = "delivered" // a 2xx arrived
	DeliveryFailed    DeliveryStatus = "failed"    // the schedule ran out
	DeliveryCancelled DeliveryStatus = "cancelled" // the endpoint was disabled, deleted, or answered 410
)

// Delivery is one message on its way to one endpoint.
type Delivery struct {
	ID            string // "dlv_..."
	MessageID     string
	EndpointID    string
	AppID         string
	Status        DeliveryStatus
	Attempts      int        // scheduled attempts made; manual attempts are logged but not counted
	NextAttemptAt *time.Time // when the next scheduled attempt is due; nil when none is
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// AttemptTrigger says why an attempt was made.
type AttemptTrigger string

const (
	TriggerScheduled AttemptTrigger = "scheduled" // the first attempt or a retry on the schedule
	TriggerManual    AttemptTrigger = "manual"    // Resend or Recover
)

// Attempt is one HTTP request of a delivery, as the attempt log shows it.
type Attempt struct {
	ID         string // "atmpt_..."
	DeliveryID string
	MessageID  string
	EndpointID string
	AppID      string
	// Number is the scheduled attempt's place in the schedule (1 for the first). A manual attempt
	// carries the number of scheduled attempts made before it (0 when none was), and Trigger says
	// it was manual.
	Number     int
	Trigger    AttemptTrigger
	URL        string
	At         time.Time
	Duration   time.Duration
	StatusCode int    // 0 when no response arrived
	Success    bool   // a 2xx arrived
	Error      string // why it failed, for a human; empty on success
	Response   string // the response body, up to the configured cap; why, when no response arrived
	// RequestHeaders are the headers the attempt sent, the signature's included and the values of
	// the endpoint's own headers Redacted; ResponseHeaders the response's. Both are bounded
	// (AttemptHeaders) and empty when nothing was sent or no response arrived.
	RequestHeaders  AttemptHeaders
	ResponseHeaders AttemptHeaders
}

// ExpungedResponse is the response of an attempt whose content was expunged, as Svix shows it.
const ExpungedResponse = "EXPUNGED"

// OperationalEvent is something an operator is told about (as Svix's operational webhooks):
// an endpoint disabled, a delivery exhausted.
type OperationalEvent struct {
	ID         string // "evt_..."
	Type       string // "endpoint.disabled", "message.attempt.exhausted", ...
	AppID      string
	EndpointID string
	MessageID  string
	Reason     string
	At         time.Time
}

// Operational event types.
const (
	OpEndpointDisabled        = "endpoint.disabled"
	OpMessageAttemptExhausted = "message.attempt.exhausted"
	OpMessageAttemptFailing   = "message.attempt.failing"
	OpMessageAttemptRecovered = "message.attempt.recovered"
	OpEndpointCreated         = "endpoint.created"
	OpEndpointUpdated         = "endpoint.updated"
	OpEndpointDeleted         = "endpoint.deleted"
)
