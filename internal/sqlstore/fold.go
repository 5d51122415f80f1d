package sqlstore

import (
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// DeliveryUpdate is a delivery's state after a batch of attempt records: the last record's, with
// the highest attempt number.
type DeliveryUpdate struct {
	ID        string
	Status    hookd.DeliveryStatus
	Attempts  int
	Next      *time.Time
	LastError string
	At        time.Time
}

// HealthUpdate is an endpoint's health after a batch. With a success in the batch, the streak
// restarts from the last success: Failures counts the failures after it and FirstFailure is the
// first of them (nil for none). Without one, Failures are added to the streak and FirstFailure
// starts it if none was running.
type HealthUpdate struct {
	ID           string
	LastAt       time.Time
	LastStatus   int
	LastError    string
	Succeeded    bool
	LastSuccess  *time.Time
	Failures     int
	FirstFailure *time.Time
}

// FoldRecords folds recs, in order, into one update per delivery and one per endpoint: the state
// that applying the records one by one would leave. Both come back in id order, so that two
// processes recording at once touch shared rows in one order.
func FoldRecords(recs []hookd.AttemptRecord) ([]DeliveryUpdate, []HealthUpdate) {
	var deliveries []DeliveryUpdate
	var endpoints []HealthUpdate
	dIndex := make(map[string]int, len(recs))
	eIndex := make(map[string]int)
	for i := range recs {
		r := &recs[i]
		a := &r.Attempt
		at := a.At

		d := DeliveryUpdate{ID: a.DeliveryID, Status: r.Status, Attempts: a.Number,
			Next: r.NextAttemptAt, LastError: a.Error, At: at}
		if j, ok := dIndex[a.DeliveryID]; ok {
			d.Attempts = max(d.Attempts, deliveries[j].Attempts)
			deliveries[j] = d
		} else {
			dIndex[a.DeliveryID] = len(deliveries)
			deliveries = append(deliveries, d)
		}

		j, ok := eIndex[a.EndpointID]
		if !ok {
			j = len(endpoints)
			eIndex[a.EndpointID] = j
			endpoints = append(endpoints, HealthUpdate{ID: a.EndpointID})
		}
		h := &endpoints[j]
		h.LastAt, h.LastStatus, h.LastError = at, a.StatusCode, a.Error
		if a.Success {
			h.Succeeded, h.LastSuccess, h.Failures, h.FirstFailure = true, &at, 0, nil
		} else {
			if h.Failures == 0 {
				h.FirstFailure = &at
			}
			h.Failures++
		}
	}
	slices.SortFunc(deliveries, func(a, b DeliveryUpdate) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(endpoints, func(a, b HealthUpdate) int { return strings.Compare(a.ID, b.ID) })
	return deliveries, endpoints
}
