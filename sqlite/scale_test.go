package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestListsAtScale times one page of each list over a million messages, deliveries and attempts
// (about 30 s to fill). Opt in:
//
//	HOOKD_SCALE=1 go test -run ListsAtScale -v ./sqlite
func TestListsAtScale(t *testing.T) {
	if os.Getenv("HOOKD_SCALE") == "" {
		t.Skip("set HOOKD_SCALE=1 to fill a database with a million rows a table and time the lists")
	}
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "hookd.db"))
	start := time.Now()
	// Message i: 1 in 50 in app_b, 1 in 1000 of event type user.created, 1 in 100 on channel rare;
	// its delivery and attempt go to endpoint ep_(i mod 10); created at i µs.
	for _, q := range []string{
		`INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_a', 'a', 0, 0), ('app_b', 'b', 0, 0)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000000)
		 INSERT INTO hookd_messages (id, app_id, event_type, channels, payload, created_at)
		 SELECT printf('msg_%012d', i), CASE WHEN i % 50 = 0 THEN 'app_b' ELSE 'app_a' END,
		   CASE WHEN i % 1000 = 7 THEN 'user.created' ELSE 'invoice.paid' END,
		   CASE WHEN i % 100 = 3 THEN '["rare"]' END, '{"i":1}', i FROM n`,
		`INSERT INTO hookd_message_channels (app_id, channel, message_id)
		 SELECT app_id, 'rare', id FROM hookd_messages WHERE channels IS NOT NULL`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000000)
		 INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, created_at, updated_at)
		 SELECT printf('dlv_%012d', i), printf('msg_%012d', i), printf('ep_%02d', i % 10), 'app_a',
		   CASE WHEN i % 100 = 0 THEN 'pending' ELSE 'delivered' END, i, i FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000000)
		 INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind,
		   url, at, duration, status_code, success)
		 SELECT printf('atmpt_%012d', i), printf('dlv_%012d', i), printf('msg_%012d', i), printf('ep_%02d', i % 10),
		   'app_a', 1, 'scheduled', 'u', i, 1, 200, i % 20 <> 0 FROM n`,
		// The attempts counted by hour, as migration 18 counts the attempts already there.
		`INSERT INTO hookd_endpoint_hours (endpoint_id, hour, app_id, succeeded, failed, min_id, max_id)
		 SELECT endpoint_id, at / 3600000000, min(app_id), sum(success), count(*) - sum(success), min(id), max(id)
		 FROM hookd_attempts GROUP BY endpoint_id, at / 3600000000`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("filled in %v", time.Since(start))

	const mid = "msg_000000500000"
	msgs := func(f hookd.MessageFilter) func() (int, error) {
		return func() (int, error) { p, err := s.ListMessages(ctx, f); return len(p.Data), err }
	}
	atts := func(f hookd.AttemptFilter) func() (int, error) {
		return func() (int, error) { p, err := s.ListAttempts(ctx, f); return len(p.Data), err }
	}
	dels := func(f hookd.DeliveryFilter) func() (int, error) {
		return func() (int, error) { p, err := s.ListDeliveries(ctx, f); return len(p.Data), err }
	}
	hours := func(f hookd.AttemptStatsFilter) func() (int, error) {
		return func() (int, error) {
			h, err := s.AttemptsPerHour(ctx, f)
			n := 0
			for _, c := range h {
				n += c.Succeeded + c.Failed
			}
			return n, err
		}
	}
	cases := []struct {
		name string
		run  func() (int, error)
		slow bool // a known scan, see the list's doc
	}{
		{"messages, first page", msgs(hookd.MessageFilter{AppID: "app_a"}), false},
		{"messages, middle page", msgs(hookd.MessageFilter{AppID: "app_a", ListOptions: hookd.ListOptions{Iterator: mid}}), false},
		{"messages, middle page backwards", msgs(hookd.MessageFilter{AppID: "app_a", ListOptions: hookd.ListOptions{Iterator: mid, Backward: true}}), false},
		{"messages, rare event type", msgs(hookd.MessageFilter{AppID: "app_a", EventTypes: []string{"user.created"}}), false},
		{"messages, two event types", msgs(hookd.MessageFilter{AppID: "app_a", EventTypes: []string{"user.created", "x"}}), false},
		{"messages, rare channel", msgs(hookd.MessageFilter{AppID: "app_a", Channel: "rare"}), false},
		{"messages, unknown channel", msgs(hookd.MessageFilter{AppID: "app_a", Channel: "none"}), false},
		{"messages, created after", msgs(hookd.MessageFilter{AppID: "app_a", After: ptrTime(900000)}), false},
		{"messages, created before the middle", msgs(hookd.MessageFilter{AppID: "app_a", Before: ptrTime(500000)}), true},
		{"messages, small application", msgs(hookd.MessageFilter{AppID: "app_b"}), false},
		{"attempts of the application", atts(hookd.AttemptFilter{AppID: "app_a"}), false},
		{"attempts of an endpoint", atts(hookd.AttemptFilter{AppID: "app_a", EndpointID: "ep_03"}), false},
		{"attempts of a message", atts(hookd.AttemptFilter{AppID: "app_a", MessageID: mid}), false},
		{"attempts of a delivery", atts(hookd.AttemptFilter{AppID: "app_a", DeliveryID: "dlv_000000500000"}), false},
		{"attempts failed", atts(hookd.AttemptFilter{AppID: "app_a", Success: new(bool)}), false},
		{"attempts of an endpoint on a channel", atts(hookd.AttemptFilter{AppID: "app_a", EndpointID: "ep_03", Channel: "rare"}), false},
		{"attempts of a rare event type", atts(hookd.AttemptFilter{AppID: "app_a", EventTypes: []string{"user.created"}}), true},
		{"deliveries of an endpoint", dels(hookd.DeliveryFilter{AppID: "app_a", EndpointID: "ep_03"}), false},
		{"deliveries of an endpoint, pending", dels(hookd.DeliveryFilter{AppID: "app_a", EndpointID: "ep_03", Status: hookd.DeliveryPending}), false},
		{"deliveries of a message", dels(hookd.DeliveryFilter{MessageID: mid}), false},
		{"load work", func() (int, error) { _, _, err := s.LoadWork(ctx, "dlv_000000500000"); return 1, err }, false},
		// The dashboard's charts: the last tenth of the attempts (100,000), counted by hour.
		{"attempts per hour of the application, 100,000", hours(hookd.AttemptStatsFilter{AppID: "app_a", Since: time.UnixMicro(900_000), FromID: "atmpt_000000900000"}), true},
		{"attempts per hour of an endpoint, 10,000", hours(hookd.AttemptStatsFilter{AppID: "app_a", EndpointID: "ep_03", Since: time.UnixMicro(900_000), FromID: "atmpt_000000900000"}), false},
	}
	for _, c := range cases {
		t0 := time.Now()
		n, err := c.run()
		took := time.Since(t0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%-45s %3d items %v", c.name, n, took)
		if !c.slow && took > 50*time.Millisecond {
			t.Errorf("%s took %v: an index is not used", c.name, took)
		}
	}
}

func ptrTime(micros int64) *time.Time {
	t := time.UnixMicro(micros)
	return &t
}
