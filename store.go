package hookd

import (
	"context"
	"time"
)

// Store is hookd's persistence. Every SQL statement lives behind it, in one package per backend
// (sqlite, postgres); each passes the conformance suite in package storetest.
//
// Stores return ErrNotFound for a missing row and ErrConflict for a unique key taken (a
// *ConflictError naming an application's or an endpoint's id or uid), wrapped with the operation.
type Store interface {
	Reader

	// InTx runs fn in a new transaction and commits when fn returns nil; otherwise it rolls back and
	// returns fn's error. fn must use only tx.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// WrapTx adapts a transaction the caller began on the store's database (for SendTx): *sql.Tx
	// for database/sql backends. It returns ErrUnsupportedTx for any other type. The caller commits.
	WrapTx(raw any) (Tx, error)
	// NewQueue returns the store's own queue (in the same database), used when Config.Queue is
	// nil.
	NewQueue(cfg *QueueConfig) (Queue, error)
	// Close releases the database.
	Close() error
}

// BackgroundWrite marks ctx as the context of background writes: the workers' attempt records
// and a queue's bookkeeping, which nobody waits for on a request path. A store whose database has
// one writer (SQLite) begins a request's transaction, such as a Send's, before a background one
// that is waiting, and lets a background one wait only a bounded time (see package sqlite).
func BackgroundWrite(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackgroundWrite reports whether ctx was marked by BackgroundWrite.
func IsBackgroundWrite(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

type backgroundKey struct{}

// BeginWithin marks ctx so that a store's InTx waits to begin (for its turn and a connection)
// only until wait ends, and then runs the transaction on ctx alone: a caller whose transaction
// carries other callers' writes (a batch of Sends) gives up waiting at its own deadline, yet
// never cancels a transaction it has begun. A wait that ends first is an error wrapping
// ErrWriterBusy and wait's error, and nothing was written.
func BeginWithin(ctx, wait context.Context) context.Context {
	return context.WithValue(ctx, beginKey{}, wait)
}

// BeginContext returns what bounds InTx's wait to begin: the wait given to BeginWithin, or ctx.
func BeginContext(ctx context.Context) context.Context {
	if w, ok := ctx.Value(beginKey{}).(context.Context); ok {
		return w
	}
	return ctx
}

type beginKey struct{}

// InProcessStore is a Store whose database runs inside this process (SQLite), so that its
// queries are this process's CPU. A Client gives such a store's jobs active places by default
// (Config.ActiveWorkers).
type InProcessStore interface {
	InProcess() bool
}

func isInProcess(s Store) bool {
	ip, ok := s.(InProcessStore)
	return ok && ip.InProcess()
}

// WorkBatchLoader is a Store that reads many deliveries with their messages in one statement
// (PostgreSQL: one round trip instead of one a delivery). The workers of a Client on such a
// store coalesce their reads: every worker that needs its delivery while a read is running joins
// the next one.
type WorkBatchLoader interface {
	// LoadWorkBatch returns the deliveries of ids that exist, each with its message, by id.
	LoadWorkBatch(ctx context.Context, deliveryIDs []string) (map[string]Work, error)
}

// EndpointAttemptCounter is a Store that counts recent attempts endpoint by endpoint in one
// statement: the dashboard's application page shows each endpoint's last 24 hours. Without it,
// the Client asks AttemptsPerHour once an endpoint.
type EndpointAttemptCounter interface {
	// AttemptsByEndpoint counts the attempts f selects (f.EndpointID aside) to each endpoint of
	// endpointIDs that has any; the others are left out.
	AttemptsByEndpoint(ctx context.Context, f AttemptStatsFilter, endpointIDs []string) (map[string]AttemptCount, error)
}

// MessageBatchReader is a Store that reads many messages of one application in one statement:
// the dashboard's message log, filtered by delivery status, shows each delivery's message.
// Without it, the Client reads them one by one.
type MessageBatchReader interface {
	// GetMessagesByID returns the messages of the application with ids (message ids, not event
	// ids) that exist, by id.
	GetMessagesByID(ctx context.Context, appID string, ids []string) (map[string]Message, error)
}

// DeliveryCounter is a Store that counts the deliveries of many messages of one application by
// status in one statement: the dashboard's message log shows each message's delivery state per
// endpoint. Without it, the Client lists each message's deliveries.
type DeliveryCounter interface {
	// DeliveryCountsByMessage counts the deliveries of each message of ids (message ids) of the
	// application that has any, by status; the others are left out.
	DeliveryCountsByMessage(ctx context.Context, appID string, ids []string) (map[string]DeliveryCounts, error)
}

// DeliveryCounts is how many of a message's deliveries are in each status.
type DeliveryCounts struct {
	Pending, Delivered, Failed, Cancelled int
}

// Add counts count deliveries in status s.
func (n *DeliveryCounts) Add(s DeliveryStatus, count int) {
	switch s {
	case DeliveryPending:
		n.Pending += count
	case DeliveryDelivered:
		n.Delivered += count
	case DeliveryFailed:
		n.Failed += count
	case DeliveryCancelled:
		n.Cancelled += count
	}
}

// Total is the number of deliveries counted.
func (n DeliveryCounts) Total() int { return n.Pending + n.Delivered + n.Failed + n.Cancelled }

// EventTypeBatchReader is a Store that looks up many event types in one statement: the API checks
// that every event type an endpoint filters on exists. Without it, the Client reads them one by one.
type EventTypeBatchReader interface {
	// ActiveEventTypes returns the names among names that are event types and not archived.
	ActiveEventTypes(ctx context.Context, names []string) (map[string]bool, error)
}

// PayloadExpirer is a Store that deletes expired payloads in batches (both of this module's
// stores are). A started Client sweeps them periodically (payload_retention.go).
type PayloadExpirer interface {
	// ExpirePayloads replaces with null the payloads of at most limit messages whose
	// PayloadExpiresAt is at or before now, clears their PayloadExpiresAt, and returns how many
	// it expired.
	ExpirePayloads(ctx context.Context, now time.Time, limit int) (int, error)
}

// AttemptCount is how many attempts succeeded and failed.
type AttemptCount struct {
	Succeeded int
	Failed    int
}

// SumHours is the attempts of hours in all.
func SumHours(hours []HourCount) AttemptCount {
	var n AttemptCount
	for _, h := range hours {
		n.Succeeded += h.Succeeded
		n.Failed += h.Failed
	}
	return n
}

// Work is a delivery with its message, as a worker reads them.
type Work struct {
	Delivery *Delivery
	Message  *Message
}

// AfterCommitter is a Tx that runs functions once it has committed: the store's own transactions
// (InTx). A queue outside the database (Redis) enqueues its jobs that way. AfterCommit reports
// false, and never runs f, for a transaction the caller commits itself (WrapTx): jobs written in
// it are left to the sweeper.
type AfterCommitter interface {
	AfterCommit(f func()) bool
}

// MessageBatchWriter is a Tx that writes the messages of many sends together (PostgreSQL: a
// batch of sends in a fixed few round trips, however many messages it holds). The sends of a
// Client go through it when the store's transaction is one, and through the Reader and Writer
// methods, one message after the other, otherwise.
type MessageBatchWriter interface {
	// SendTargets finds the applications named (each by id or, failing that, by uid) and the
	// enabled endpoints of each, ordered by id: apps by the name given, endpoints by application
	// id. A name of no application is left out of apps.
	SendTargets(ctx context.Context, names []string) (apps map[string]*Application, endpoints map[string][]Endpoint, err error)
	// InsertMessages writes msgs (each with its AppID set), with their channels and tags, as
	// InsertMessage writes each in turn: a message whose application already has its event id,
	// also from earlier in msgs, is not written and existing[i] is that first message; for a
	// message written, existing[i] is nil.
	InsertMessages(ctx context.Context, msgs []*Message) (existing []*Message, err error)
	// HoldWrites lets the writes that follow in the transaction (InsertDeliveries, a queue's
	// EnqueueTx) wait for its commit and go to the database with it; their errors come back from
	// InTx. Only for writes whose counts of rows nothing reads.
	HoldWrites()
}

// Tx is one transaction of a Store.
type Tx interface {
	Reader
	Writer
	// Raw returns the driver's transaction (*sql.Tx for database/sql backends), so that a queue in
	// the same database can insert its jobs in it.
	Raw() any
}

// Reader reads. Lists page by id (see ListOptions).
type Reader interface {
	// GetApplication finds an application by id or by uid.
	GetApplication(ctx context.Context, idOrUID string) (*Application, error)
	ListApplications(ctx context.Context, opts ListOptions) (*Page[Application], error)

	// GetEndpoint finds an endpoint of the application by id or by uid.
	GetEndpoint(ctx context.Context, appID, idOrUID string) (*Endpoint, error)
	// GetEndpointByID finds an endpoint by id alone (the worker's lookup).
	GetEndpointByID(ctx context.Context, id string) (*Endpoint, error)
	ListEndpoints(ctx context.Context, appID string, opts ListOptions) (*Page[Endpoint], error)
	// EnabledEndpoints returns every enabled endpoint of the application, ordered by id; the
	// caller applies the event-type and channel filters.
	EnabledEndpoints(ctx context.Context, appID string) ([]Endpoint, error)
	// SigningKeys returns the endpoint's keys, newest first, expired ones included.
	SigningKeys(ctx context.Context, endpointID string) ([]SigningKey, error)

	GetEventType(ctx context.Context, name string) (*EventType, error)
	ListEventTypes(ctx context.Context, includeArchived bool, opts ListOptions) (*Page[EventType], error)

	// GetMessage finds a message of the application by id or by event id.
	GetMessage(ctx context.Context, appID, idOrEventID string) (*Message, error)
	ListMessages(ctx context.Context, f MessageFilter) (*Page[Message], error)

	GetDelivery(ctx context.Context, id string) (*Delivery, error)
	// GetDeliveryFor finds the delivery of a message to an endpoint.
	GetDeliveryFor(ctx context.Context, messageID, endpointID string) (*Delivery, error)
	ListDeliveries(ctx context.Context, f DeliveryFilter) (*Page[Delivery], error)
	// LoadWork returns a delivery with its message, in one read, for the worker.
	LoadWork(ctx context.Context, deliveryID string) (*Delivery, *Message, error)

	GetAttempt(ctx context.Context, id string) (*Attempt, error)
	ListAttempts(ctx context.Context, f AttemptFilter) (*Page[Attempt], error)
	// AttemptsPerHour counts the attempts f selects by the hour they were made in (UTC), oldest
	// first; hours without attempts are left out.
	AttemptsPerHour(ctx context.Context, f AttemptStatsFilter) ([]HourCount, error)

	ListOperationalEvents(ctx context.Context, opts ListOptions) (*Page[OperationalEvent], error)

	// EndpointStats counts the attempts made to the endpoint at or after since and before until,
	// by outcome.
	EndpointStats(ctx context.Context, endpointID string, since, until time.Time) (*EndpointStats, error)
	// GetToken finds a server token by hash; an expired one is ErrNotFound.
	GetToken(ctx context.Context, hash string, now time.Time) (*Token, error)
	// GetSession finds a browser session by hash; an expired one is ErrNotFound.
	GetSession(ctx context.Context, hash string, now time.Time) (*Session, error)
	// GetIdempotentResponse finds a stored response by key; an expired one is ErrNotFound.
	GetIdempotentResponse(ctx context.Context, key string, now time.Time) (*IdempotentResponse, error)
	// PendingSummary returns, for each endpoint with pending deliveries (deleted endpoints
	// included), their count and the oldest one's creation time, ordered by endpoint id.
	PendingSummary(ctx context.Context) ([]PendingEndpoint, error)
	// DueDeliveries returns pending deliveries whose next attempt was due at or before before
	// (NextAttemptAt, or CreatedAt when it is nil), with ids greater than afterID (empty: from the
	// first), in id order, at most limit. A queue outside the database sweeps them (Sweeper).
	DueDeliveries(ctx context.Context, before time.Time, afterID string, limit int) ([]Delivery, error)
	// FirstPendingDelivery returns the endpoint's pending delivery with the lowest id: an ordered
	// endpoint's head (ordered.go). None is ErrNotFound.
	FirstPendingDelivery(ctx context.Context, endpointID string) (*Delivery, error)
	// ParkedDeliveries returns the endpoint's parked deliveries (pending with NextAttemptAt nil)
	// with ids greater than afterID (empty: from the first), in id order, at most limit.
	ParkedDeliveries(ctx context.Context, endpointID, afterID string, limit int) ([]Delivery, error)
}

// Writer writes, inside a Tx.
type Writer interface {
	InsertApplication(ctx context.Context, app *Application) error
	// UpdateApplication writes every field of app but ID and CreatedAt.
	UpdateApplication(ctx context.Context, app *Application) error
	// DeleteApplication deletes the application and, with it, its endpoints, messages, deliveries
	// and attempts.
	DeleteApplication(ctx context.Context, id string) error

	// InsertEndpoint writes the endpoint and its first signing key.
	InsertEndpoint(ctx context.Context, ep *Endpoint, key SigningKey) error
	// LockEndpointCount counts the application's endpoints, disabled ones included, and keeps
	// every other transaction from adding one to it until this one ends (the endpoint quota).
	LockEndpointCount(ctx context.Context, appID string) (int, error)
	// UpdateEndpoint writes the endpoint's configuration (not its health, not Disabled*).
	UpdateEndpoint(ctx context.Context, ep *Endpoint) error
	// DeleteEndpoint deletes the endpoint and its keys; its deliveries stay, for the log.
	DeleteEndpoint(ctx context.Context, id string) error
	// SetEndpointDisabled enables (disabled false: reason and DisabledAt cleared, health reset) or
	// disables an endpoint.
	SetEndpointDisabled(ctx context.Context, id string, disabled bool, reason string, at time.Time) error
	// AddSigningKey adds a key to the endpoint and sets every other unexpired key of it to expire at
	// expireOthersAt (a rotation's grace period; now to expire them at once).
	AddSigningKey(ctx context.Context, endpointID string, key SigningKey, expireOthersAt time.Time) error

	// UpsertEventType creates the event type or, if it exists, updates it and un-archives it.
	UpsertEventType(ctx context.Context, et *EventType) error
	// ArchiveEventType marks an event type archived.
	ArchiveEventType(ctx context.Context, name string, at time.Time) error
	// DeleteEventType removes an event type for good.
	DeleteEventType(ctx context.Context, name string) error

	// InsertMessage writes msg. When msg.EventID is set and the application already has a message
	// with that event id, it writes nothing and returns the existing message and inserted false;
	// two concurrent inserts of one event id give one row.
	InsertMessage(ctx context.Context, msg *Message) (existing *Message, inserted bool, err error)
	// InsertDeliveries writes new deliveries.
	InsertDeliveries(ctx context.Context, ds []Delivery) error
	// SetDeliveryStatus ends or reschedules a delivery without an attempt (a cancel, a recover).
	SetDeliveryStatus(ctx context.Context, id string, status DeliveryStatus, nextAttemptAt *time.Time, lastError string, at time.Time) error
	// ParkDelivery clears the next attempt time of a pending delivery (UpdatedAt = at), so that it
	// waits, with no job, behind an earlier delivery to its ordered endpoint, and reports whether
	// it did. It parks nothing, and reports false, unless, as it writes, the delivery is pending,
	// its endpoint exists and is ordered, and an earlier delivery to the endpoint is pending. It waits for, and is waited for by,
	// LockFirstPending of the endpoint and an update of the endpoint (a store with concurrent
	// writers locks the endpoint row for it).
	ParkDelivery(ctx context.Context, id, endpointID string, at time.Time) (bool, error)
	// LockFirstPending is FirstPendingDelivery, read once every ParkDelivery of the endpoint in
	// another transaction has ended, with new ones kept waiting until this transaction ends: a
	// delivery parked concurrently is read parked, or is not parked at all.
	LockFirstPending(ctx context.Context, endpointID string) (*Delivery, error)
	// RecordAttempts writes attempts and, for each, its delivery's new state and its endpoint's
	// health, in order.
	RecordAttempts(ctx context.Context, recs []AttemptRecord) error
	// ExpungeMessagePayload replaces a message's payload with null (Svix's expunge content); the
	// message then has no PayloadExpiresAt.
	ExpungeMessagePayload(ctx context.Context, messageID string) error

	InsertOperationalEvents(ctx context.Context, evs []OperationalEvent) error

	// ExpungeAttemptResponse replaces an attempt's captured response with ExpungedResponse and
	// clears its response headers.
	ExpungeAttemptResponse(ctx context.Context, attemptID string) error
	// InsertToken stores a server token (ErrConflict when the hash exists).
	InsertToken(ctx context.Context, t *Token) error
	// DeleteToken removes a server token; a missing one is ErrNotFound.
	DeleteToken(ctx context.Context, hash string) error
	// InsertSession stores a browser session (ErrConflict when the hash exists) and deletes the
	// sessions expired at or before s.CreatedAt.
	InsertSession(ctx context.Context, s *Session) error
	// DeleteSession removes a browser session; a missing one is ErrNotFound.
	DeleteSession(ctx context.Context, hash string) error
	// PutIdempotentResponse stores a response; an unexpired one under the same key is ErrConflict
	// (an expired one is replaced). It also deletes responses expired before r.CreatedAt.
	PutIdempotentResponse(ctx context.Context, r *IdempotentResponse) error
}

// AttemptRecord is one attempt with the delivery state it leads to.
type AttemptRecord struct {
	Attempt Attempt
	// Status and NextAttemptAt are the delivery's new state; Attempt.Number becomes its count of
	// attempts made, Attempt.Error its last error.
	Status        DeliveryStatus
	NextAttemptAt *time.Time
}

// ListOptions pages through a list ordered by id. Messages and attempts list newest first;
// applications, endpoints, event types and operational events oldest first.
type ListOptions struct {
	// Limit is the page size. Zero: 50. At most 250.
	Limit int
	// Iterator continues after the item with this id (exclusive), in the list's order. Empty: from
	// the start.
	Iterator string
	// Backward, with Iterator, returns the page that precedes Iterator instead (Svix's
	// prev_iterator).
	Backward bool
}

// Page is one page of a list.
type Page[T any] struct {
	Data []T
	// Iterator is the id to pass for the next page; empty when Done.
	Iterator string
	// PrevIterator is the id to pass, with Backward, for the previous page; empty on the first page.
	PrevIterator string
	// Done is true when no item follows this page.
	Done bool
}

// MessageFilter selects messages of one application.
type MessageFilter struct {
	AppID      string
	EventTypes []string   // any of these; empty: all
	Channel    string     // messages naming this channel; empty: all
	Tag        string     // messages with this tag; empty: all
	After      *time.Time // created at or after
	Before     *time.Time // created before
	// FromID and BeforeID, when set, also limit the list to ids sorting at or after FromID and
	// before BeforeID, so that a list bounded by time walks only that part of its index. The
	// client sets them from After and Before (hookd's ids sort by creation time); either bound
	// must hold every message the times select.
	FromID, BeforeID string
	// FromAfter, with After and neither Before nor Iterator, makes the page the oldest messages
	// from After on (in list order), as Svix pages after a time; its PrevIterator walks on to
	// newer ones. False: the newest.
	FromAfter bool
	ListOptions
}

// DeliveryFilter selects deliveries.
type DeliveryFilter struct {
	AppID      string
	MessageID  string
	EndpointID string
	Status     DeliveryStatus // empty: any
	// Statuses, with Status empty, selects deliveries of any of the statuses it lists (Svix's
	// "failed" is hookd's failed or cancelled); each is read from its own index range.
	Statuses []DeliveryStatus
	After    *time.Time
	Before   *time.Time
	// FromID bounds the ids as MessageFilter's does; the client sets it from After (a delivery
	// may get its id a while after its message's time, which it is created at, so Before bounds
	// no id).
	FromID string
	ListOptions
}

// AttemptStatsFilter selects the attempts AttemptsPerHour counts: those to an application's
// endpoints (AppID, required), or to one of them (EndpointID too), made at or after Since.
type AttemptStatsFilter struct {
	AppID      string
	EndpointID string
	Since      time.Time
	// FromID, when set, also limits the count to attempts whose id sorts at or after it, so that
	// the query walks the index from there rather than from the application's first attempt. The
	// client passes AttemptIDFloor(Since): hookd's ids sort by creation time.
	FromID string
}

// HourCount is how many attempts made in one hour succeeded and failed.
type HourCount struct {
	Hour      time.Time // the hour's start, UTC
	Succeeded int
	Failed    int
}

// AttemptFilter selects attempts of one application.
type AttemptFilter struct {
	AppID      string
	MessageID  string
	EndpointID string
	DeliveryID string
	Success    *bool      // only successes (true) or failures (false); nil: both
	EventTypes []string   // of messages with one of these event types
	Channel    string     // of messages naming this channel
	After      *time.Time // made at or after
	Before     *time.Time // made before
	FromAfter  bool       // as MessageFilter.FromAfter
	// FromID bounds the ids as MessageFilter's does; the client sets it from After (an attempt
	// gets its id when recorded, after it was made, so Before bounds no id).
	FromID string
	ListOptions
}
