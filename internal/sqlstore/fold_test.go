package sqlstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

func TestFoldRecords(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ptr := func(v time.Time) *time.Time { return &v }
	rec := func(delivery, endpoint string, number, second int, success bool, status hookd.DeliveryStatus) hookd.AttemptRecord {
		r := hookd.AttemptRecord{Status: status, Attempt: hookd.Attempt{
			DeliveryID: delivery, EndpointID: endpoint, Number: number, At: at(second), Success: success,
			StatusCode: 500, Error: "fail " + delivery,
		}}
		if success {
			r.Attempt.StatusCode, r.Attempt.Error = 200, ""
		} else {
			r.NextAttemptAt = ptr(at(second + 60))
		}
		return r
	}
	for _, tc := range []struct {
		name       string
		recs       []hookd.AttemptRecord
		deliveries []DeliveryUpdate
		endpoints  []HealthUpdate
	}{
		{
			name: "failures start a streak at the first",
			recs: []hookd.AttemptRecord{
				rec("d2", "e1", 1, 1, false, hookd.DeliveryPending),
				rec("d1", "e1", 1, 2, false, hookd.DeliveryPending),
			},
			deliveries: []DeliveryUpdate{
				{ID: "d1", Status: hookd.DeliveryPending, Attempts: 1, Next: ptr(at(62)), LastError: "fail d1", At: at(2)},
				{ID: "d2", Status: hookd.DeliveryPending, Attempts: 1, Next: ptr(at(61)), LastError: "fail d2", At: at(1)},
			},
			endpoints: []HealthUpdate{
				{ID: "e1", LastAt: at(2), LastStatus: 500, LastError: "fail d1", Failures: 2, FirstFailure: ptr(at(1))},
			},
		},
		{
			name: "a success restarts the streak; a delivery keeps its last state and highest number",
			recs: []hookd.AttemptRecord{
				rec("d1", "e2", 3, 1, false, hookd.DeliveryPending),
				rec("d1", "e2", 2, 2, true, hookd.DeliveryDelivered),
				rec("d3", "e1", 1, 3, false, hookd.DeliveryPending),
				rec("d4", "e2", 1, 4, false, hookd.DeliveryPending),
			},
			deliveries: []DeliveryUpdate{
				{ID: "d1", Status: hookd.DeliveryDelivered, Attempts: 3, At: at(2)},
				{ID: "d3", Status: hookd.DeliveryPending, Attempts: 1, Next: ptr(at(63)), LastError: "fail d3", At: at(3)},
				{ID: "d4", Status: hookd.DeliveryPending, Attempts: 1, Next: ptr(at(64)), LastError: "fail d4", At: at(4)},
			},
			endpoints: []HealthUpdate{
				{ID: "e1", LastAt: at(3), LastStatus: 500, LastError: "fail d3", Failures: 1, FirstFailure: ptr(at(3))},
				{ID: "e2", LastAt: at(4), LastStatus: 500, LastError: "fail d4", Succeeded: true,
					LastSuccess: ptr(at(2)), Failures: 1, FirstFailure: ptr(at(4))},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deliveries, endpoints := FoldRecords(tc.recs)
			if !reflect.DeepEqual(deliveries, tc.deliveries) {
				t.Errorf("deliveries\n got %+v\nwant %+v", deliveries, tc.deliveries)
			}
			if !reflect.DeepEqual(endpoints, tc.endpoints) {
				t.Errorf("endpoints\n got %+v\nwant %+v", endpoints, tc.endpoints)
			}
		})
	}
}
