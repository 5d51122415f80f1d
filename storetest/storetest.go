// Package storetest is the conformance suite every hookd.Store passes unchanged: run it from the
// backend's own test with a function that returns a fresh, empty store.
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) hookd.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hookd.db"), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { _ = s.Close() })
//			return s
//		})
//	}
//
// Every test is a parallel subtest with a store of its own, so newStore must isolate (a file, a
// schema or a database per call) and close what it opens with t.Cleanup.
//
// # What the suite pins beyond hookd.Store's documentation
//
//   - Times come back as the same instant, to the microsecond, in UTC; a hookd.Client's creates
//     and updates return the times a later read returns.
//   - Empty lists and maps (an endpoint's event types, channels, headers, metadata; a message's
//     channels) come back nil; a nil json.RawMessage (a payload expunged, no schemas) comes back
//     nil; payloads come back byte for byte.
//   - Missing rows are hookd.ErrNotFound, for reads and for writes that name a row (an update, a
//     delete, a key added to a missing endpoint, an attempt of a missing delivery, a row whose parent
//     is missing); unique keys taken (ids included) are hookd.ErrConflict, and an application's
//     or an endpoint's id or uid taken (inserted or updated) is a *hookd.ConflictError naming the
//     entity, the field and the value.
//   - A page's Iterator is its last item's id when an item follows it, else "" and Done; its
//     PrevIterator is its first item's id when an item precedes it, else "". An empty page has
//     neither and is Done, except when asked for with Backward while items exist: they all follow it,
//     so it is not Done and its Iterator "" leads to the first page.
//   - The first page of a newest-first list (messages, attempts) with FromAfter, After, no Before
//     and no Iterator holds the oldest items from After on, in list order; its PrevIterator is its
//     first item's id and it is Done when nothing follows in time (afterTests).
//   - InsertMessage returns a nil existing message when it inserts.
//   - AddSigningKey shortens the other keys' expiry to expireOthersAt, never lengthens it.
//   - UpsertEventType writes Archived as given (false un-archives) and keeps CreatedAt.
//   - SetEndpointDisabled sets UpdatedAt to at; enabling keeps LastAttemptAt, LastStatus, LastError
//     and LastSuccessAt.
//   - DeleteApplication keeps operational events.
//   - A token or a stored response with ExpiresAt at or before now is expired; an admin token's
//     AppID "" comes back ""; a nil response body comes back nil.
//   - A token of a missing application is hookd.ErrNotFound; a repeated DeleteToken too.
//   - A session is found by its own hash only; InsertSession purges the sessions expired at its
//     CreatedAt; a session of a missing application is hookd.ErrNotFound; a repeated DeleteSession
//     too; DeleteApplication deletes its portal sessions.
//   - ExpungeAttemptResponse of an already expunged attempt succeeds.
//   - LockEndpointCount counts disabled endpoints too; of a missing application it is
//     hookd.ErrNotFound; a second transaction's call in the same application returns only once the
//     first transaction has ended, and counts what it committed.
//   - EndpointStats of an endpoint without attempts is all zeros, not an error; since is
//     inclusive, until exclusive.
package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

type test struct {
	name string
	fn   func(t *testing.T, f *fixture)
}

type group struct {
	name  string
	tests []test
}

// Run runs the suite against the stores newStore returns, one per subtest.
func Run(t *testing.T, newStore func(t *testing.T) hookd.Store) {
	t.Helper()
	groups := []group{
		{"Applications", applicationTests},
		{"Endpoints", endpointTests},
		{"SigningKeys", signingKeyTests},
		{"EventTypes", eventTypeTests},
		{"Messages", messageTests},
		{"Deliveries", deliveryTests},
		{"Attempts", attemptTests},
		{"OperationalEvents", operationalEventTests},
		{"Paging", pagingTests},
		{"PagingAfter", afterTests},
		{"ListBounds", listBoundTests},
		{"MessageRetentionAndTags", retentionTests},
		{"Transactions", transactionTests},
		{"Tokens", tokenTests},
		{"Sessions", sessionTests},
		{"IdempotentResponses", idempotencyTests},
		{"EndpointStats", endpointStatsTests},
		{"AttemptCounts", attemptCountTests},
		{"ExpungeAttemptResponse", expungeAttemptResponseTests},
		{"PendingSummary", pendingSummaryTests},
		{"DueDeliveries", dueDeliveryTests},
		{"OrderedDeliveries", orderedDeliveryTests},
		{"ClientTimes", clientTimeTests},
		{"Ping", pingTests},
		{"EndpointQuota", endpointQuotaTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t, newFixture(t, newStore))
				})
			}
		})
	}
}

func applicationID(a hookd.Application) string           { return a.ID }
func endpointID(e hookd.Endpoint) string                 { return e.ID }
func eventTypeName(e hookd.EventType) string             { return e.Name }
func messageID(m hookd.Message) string                   { return m.ID }
func deliveryID(d hookd.Delivery) string                 { return d.ID }
func attemptID(a hookd.Attempt) string                   { return a.ID }
func operationalEventID(e hookd.OperationalEvent) string { return e.ID }
