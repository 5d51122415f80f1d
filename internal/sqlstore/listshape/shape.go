// Package listshape makes a store's database of a realistic shape for the plan tests of the
// lists: applications of Zipf sizes (the first with most rows), several endpoints each, one of
// them filtered by event type, event types of Zipf frequencies, a third of the messages on a
// channel and a quarter tagged, creation times spread over 30 days with ids that sort by them,
// deliveries mostly delivered and a few failed, pending or cancelled, and an attempt for each
// try (about 5 % failed). It writes through the store's own Writer, so the rows are what hookd
// writes, and keeps them in memory so that a test can say which a list must return.
package listshape

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hookd/hookd"
)

// Span is how far back the messages' creation times go.
const Span = 30 * 24 * time.Hour

// Shape is the rows made, each kind in id order.
type Shape struct {
	Now        time.Time
	Apps       []hookd.Application
	Endpoints  []hookd.Endpoint
	Messages   []hookd.Message
	Deliveries []hookd.Delivery // with their final status
	Attempts   []hookd.Attempt
	// Records are the attempts' records, in the order written.
	Records []hookd.AttemptRecord
	// Cancelled are the deliveries cancelled after their attempts.
	Cancelled []string
}

// EventTypes are the event types the messages have, the first the most frequent.
var EventTypes = []string{"type.00", "type.01", "type.02", "type.03", "type.04", "type.05",
	"type.06", "type.07", "type.08", "type.09", "type.10", "type.11"}

// Make returns a shape of n messages created in the Span before now, the same for the same n
// and now.
func Make(n int, now time.Time) *Shape {
	r := rand.New(rand.NewPCG(28, uint64(n)))
	now = now.UTC().Truncate(time.Millisecond)
	s := &Shape{Now: now}
	const apps = 8
	appWeights := zipf(apps, 1.1)
	typeWeights := zipf(len(EventTypes), 1.0)
	created := now.Add(-Span - time.Hour)
	for i := range apps {
		a := hookd.Application{ID: fmt.Sprintf("app_%02d", i), Name: fmt.Sprintf("App %d", i), CreatedAt: created, UpdatedAt: created}
		s.Apps = append(s.Apps, a)
		for k := range max(1, 6-i) {
			ep := hookd.Endpoint{
				ID: fmt.Sprintf("ep_%02d_%d", i, k), AppID: a.ID, URL: "https://receiver.example/hooks", Version: 1,
				Scheme: hookd.SchemeStandard, CreatedAt: created, UpdatedAt: created,
			}
			if k == 1 {
				ep.EventTypes = EventTypes[:3]
			}
			s.Endpoints = append(s.Endpoints, ep)
		}
	}
	// Creation times, distinct milliseconds, oldest first.
	times := make([]int64, 0, n)
	seen := make(map[int64]bool, n)
	for len(times) < n {
		ms := now.Add(-Span).UnixMilli() + r.Int64N(Span.Milliseconds())
		if !seen[ms] {
			seen[ms] = true
			times = append(times, ms)
		}
	}
	slices.Sort(times)
	seq := 0
	next := func() string { seq++; return fmt.Sprintf("%06d", seq) }
	for _, ms := range times {
		t := time.UnixMilli(ms).UTC()
		app := s.Apps[pick(r, appWeights)]
		m := hookd.Message{
			ID: hookd.MessageIDFloor(t) + next(), AppID: app.ID, EventType: EventTypes[pick(r, typeWeights)],
			Payload: []byte(`{"n":1}`), CreatedAt: t,
		}
		if r.Float64() < 0.3 {
			m.Channels = []string{fmt.Sprintf("ch.%d", r.IntN(5))}
		}
		if r.Float64() < 0.25 {
			m.Tags = []string{fmt.Sprintf("tag.%d", r.IntN(4))}
		}
		s.Messages = append(s.Messages, m)
		for _, ep := range s.Endpoints {
			if ep.AppID != m.AppID || len(ep.EventTypes) > 0 && !slices.Contains(ep.EventTypes, m.EventType) {
				continue
			}
			d := hookd.Delivery{
				ID: hookd.DeliveryIDFloor(t) + next(), MessageID: m.ID, EndpointID: ep.ID, AppID: m.AppID,
				Status: hookd.DeliveryPending, NextAttemptAt: &m.CreatedAt, CreatedAt: t, UpdatedAt: t,
			}
			s.attempts(r, &d, m, next)
			s.Deliveries = append(s.Deliveries, d)
		}
	}
	slices.SortFunc(s.Attempts, func(a, b hookd.Attempt) int { return compare(a.ID, b.ID) })
	slices.SortFunc(s.Records, func(a, b hookd.AttemptRecord) int { return compare(a.Attempt.ID, b.Attempt.ID) })
	return s
}

// attempts makes d's attempts and sets its final status: delivered at the first try mostly,
// at the second sometimes, failed after three tries, cancelled after one, or still pending.
func (s *Shape) attempts(r *rand.Rand, d *hookd.Delivery, m hookd.Message, next func() string) {
	var outcomes []bool // each try's success
	status := hookd.DeliveryDelivered
	switch x := r.Float64(); {
	case m.CreatedAt.After(s.Now.Add(-time.Hour)) && x < 0.2, x < 0.005:
		status = hookd.DeliveryPending
		if x < 0.1 {
			outcomes = []bool{false}
		}
	case x < 0.01:
		status, outcomes = hookd.DeliveryCancelled, []bool{false}
	case x < 0.035:
		status, outcomes = hookd.DeliveryFailed, []bool{false, false, false}
	case x < 0.06:
		outcomes = []bool{false, true}
	default:
		outcomes = []bool{true}
	}
	for i, ok := range outcomes {
		at := m.CreatedAt.Add(time.Duration(i)*7*time.Minute + 40*time.Millisecond)
		a := hookd.Attempt{
			ID: hookd.AttemptIDFloor(at.Add(90*time.Millisecond)) + next(), DeliveryID: d.ID, MessageID: d.MessageID,
			EndpointID: d.EndpointID, AppID: d.AppID, Number: i + 1, Trigger: hookd.TriggerScheduled,
			URL: "https://receiver.example/hooks", At: at, Duration: 80 * time.Millisecond, StatusCode: 200, Success: ok,
			Response: "ok",
		}
		rec := hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryPending}
		if !ok {
			a.StatusCode, a.Error, a.Response = 500, "HTTP 500", "no"
			rec.Attempt = a
			retry := at.Add(7 * time.Minute)
			rec.NextAttemptAt = &retry
		}
		last := i == len(outcomes)-1
		if last && status != hookd.DeliveryCancelled {
			rec.Status = status
			if status != hookd.DeliveryPending {
				rec.NextAttemptAt = nil
			}
		}
		s.Attempts = append(s.Attempts, rec.Attempt)
		s.Records = append(s.Records, rec)
		d.Attempts, d.LastError, d.UpdatedAt, d.NextAttemptAt = a.Number, a.Error, a.At, rec.NextAttemptAt
	}
	if status == hookd.DeliveryCancelled {
		s.Cancelled = append(s.Cancelled, d.ID)
	}
	d.Status = status
}

// Fill writes the shape into store, a few thousand rows a transaction.
func (s *Shape) Fill(ctx context.Context, store hookd.Store) error {
	write := func(what string, fn func(tx hookd.Tx) error) error {
		if err := store.InTx(ctx, fn); err != nil {
			return fmt.Errorf("fill %s: %w", what, err)
		}
		return nil
	}
	err := write("applications and endpoints", func(tx hookd.Tx) error {
		for i := range s.Apps {
			if err := tx.InsertApplication(ctx, &s.Apps[i]); err != nil {
				return err
			}
		}
		for i := range s.Endpoints {
			ep := s.Endpoints[i]
			if err := tx.InsertEndpoint(ctx, &ep, hookd.SigningKey{Secret: "whsec_" + ep.ID, CreatedAt: ep.CreatedAt}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	const batch = 2000
	for lo := 0; lo < len(s.Messages); lo += batch {
		msgs := s.Messages[lo:min(lo+batch, len(s.Messages))]
		err := write("messages", func(tx hookd.Tx) error {
			if w, ok := tx.(hookd.MessageBatchWriter); ok {
				ptrs := make([]*hookd.Message, len(msgs))
				for i := range msgs {
					m := msgs[i]
					ptrs[i] = &m
				}
				_, err := w.InsertMessages(ctx, ptrs)
				return err
			}
			for i := range msgs {
				m := msgs[i]
				if _, _, err := tx.InsertMessage(ctx, &m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for lo := 0; lo < len(s.Deliveries); lo += batch {
		ds := slices.Clone(s.Deliveries[lo:min(lo+batch, len(s.Deliveries))])
		for i := range ds {
			ds[i].Status, ds[i].Attempts, ds[i].LastError = hookd.DeliveryPending, 0, ""
			ds[i].NextAttemptAt, ds[i].UpdatedAt = &ds[i].CreatedAt, ds[i].CreatedAt
		}
		if err := write("deliveries", func(tx hookd.Tx) error { return tx.InsertDeliveries(ctx, ds) }); err != nil {
			return err
		}
	}
	// Records in id order, which is time order but for a delivery's later tries: each batch
	// holds a delivery's tries in their order.
	for lo := 0; lo < len(s.Records); lo += batch {
		recs := s.Records[lo:min(lo+batch, len(s.Records))]
		if err := write("attempts", func(tx hookd.Tx) error { return tx.RecordAttempts(ctx, recs) }); err != nil {
			return err
		}
	}
	return write("cancellations", func(tx hookd.Tx) error {
		for _, id := range s.Cancelled {
			i := slices.IndexFunc(s.Deliveries, func(d hookd.Delivery) bool { return d.ID == id })
			d := s.Deliveries[i]
			if err := tx.SetDeliveryStatus(ctx, id, hookd.DeliveryCancelled, nil, d.LastError, d.UpdatedAt); err != nil {
				return err
			}
		}
		return nil
	})
}

// zipf returns n weights falling as 1/k^s, summing to 1.
func zipf(n int, s float64) []float64 {
	w := make([]float64, n)
	sum := 0.0
	for k := range n {
		w[k] = 1 / math.Pow(float64(k+1), s)
		sum += w[k]
	}
	for k := range w {
		w[k] /= sum
	}
	return w
}

// pick returns an index drawn with the weights w.
func pick(r *rand.Rand, w []float64) int {
	x := r.Float64()
	for i, p := range w {
		if x < p {
			return i
		}
		x -= p
	}
	return len(w) - 1
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
