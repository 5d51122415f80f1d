package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookd/hookd"
)

// SetQueueTiming sets the lease of q's claims and the poll interval of every lane of q, before
// Start.
func SetQueueTiming(q hookd.Queue, lease, poll time.Duration) {
	pq := q.(*Queue)
	pq.driver.lease = lease
	pq.engine.SetPoll(poll)
}

// OnListen makes q call f each time its listener starts listening, before Start.
func OnListen(q hookd.Queue, f func()) { q.(*Queue).driver.onListen = f }

// NotifyChannel is the channel the queue of schema notifies.
var NotifyChannel = notifyChannel

// QueuePlanParams are the planner settings the queue's pool turns off.
var QueuePlanParams = queuePlanParams

// AsyncPool is the pool of s's queue statements (claims, outcomes, notifications).
func AsyncPool(s *Store) *pgxpool.Pool { return s.asyncPool }

// The statements of the queue's and the workers' hot path.
const (
	InsertJobsSQL     = insertJobsSQL
	ClaimJobsSQL      = claimJobsSQL
	FinishJobsSQL     = finishJobsSQL
	LoadWorkBatchSQL  = loadWorkBatchSQL
	RecordAttemptsSQL = recordAttemptsSQL
	AcquireSlotsSQL   = acquireSlotsSQL
	RenewSlotsSQL     = renewSlotsSQL
	ReleaseSlotsSQL   = releaseSlotsSQL
	DropSlotsSQL      = dropSlotsSQL

	SendAppsSQL         = sendAppsSQL
	SendEndpointsSQL    = sendEndpointsSQL
	InsertMessagesSQL   = insertMessagesSQL
	ExistingMessagesSQL = existingMessagesSQL
	InsertChannelsSQL   = insertChannelsSQL
	InsertTagsSQL       = insertTagsSQL

	// RepairJobsSQL is the queue's repair at start, not of the hot path.
	RepairJobsSQL = repairJobsSQL
)

// RetentionLockKey is the advisory lock key of the retention cleaner in schema.
var RetentionLockKey = retentionLockKey

// ListReads are the reads of the lists that walk an index of attempts or deliveries.
type ListReads interface {
	ListMessages(ctx context.Context, f hookd.MessageFilter) (*hookd.Page[hookd.Message], error)
	ListAttempts(ctx context.Context, f hookd.AttemptFilter) (*hookd.Page[hookd.Attempt], error)
	ListDeliveries(ctx context.Context, f hookd.DeliveryFilter) (*hookd.Page[hookd.Delivery], error)
	FirstPendingDelivery(ctx context.Context, endpointID string) (*hookd.Delivery, error)
	ParkedDeliveries(ctx context.Context, endpointID, afterID string, limit int) ([]hookd.Delivery, error)
	AttemptsPerHour(ctx context.Context, f hookd.AttemptStatsFilter) ([]hookd.HourCount, error)
	AttemptsByEndpoint(ctx context.Context, f hookd.AttemptStatsFilter, endpointIDs []string) (map[string]hookd.AttemptCount, error)
	DueDeliveries(ctx context.Context, before time.Time, afterID string, limit int) ([]hookd.Delivery, error)
}

// ReadsOn are the store's reads run on c alone.
func ReadsOn(c *pgx.Conn) ListReads {
	q := newQueries(pgxConn{c})
	return &q
}
