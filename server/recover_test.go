package server

import (
	"net/http"
	"testing"
	"time"
)

// TestRecoverWindow: a recovery reaches at most 14 days (and five minutes) before until, or before
// now without until, as Svix's: further back is a 422 naming since; within it, 202 with a running
// task at once.
func TestRecoverWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "window", "/window", nil, nil)
	path := "/api/v1/app/window/endpoint/" + f.ep.ID + "/recover"
	now := time.Now().UTC()
	day := 24 * time.Hour
	until := now.Add(-30 * day)
	ts := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"15 days before now", `{"since":"` + ts(now.Add(-15*day)) + `"}`, 422},
		{"15 days before until", `{"since":"` + ts(until.Add(-15*day)) + `","until":"` + ts(until) + `"}`, 422},
		{"14 days before now", `{"since":"` + ts(now.Add(-14*day)) + `"}`, 202},
		{"14 days and 4 minutes before until", `{"since":"` + ts(until.Add(-14*day-4*time.Minute)) + `","until":"` + ts(until) + `"}`, 202},
	} {
		resp := b.do(t, "POST", path, c.body)
		body := mtJSON(t, resp)
		if resp.StatusCode != c.want {
			t.Fatalf("%s: %d %v, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if c.want == 422 && mtField(t, body) != "since" {
			t.Fatalf("%s: %v, want a 422 naming since", c.name, body)
		}
		if c.want == 202 && (body["status"] != "running" || body["task"] != "endpoint.recover") {
			t.Fatalf("%s: %v", c.name, body)
		}
	}
	if resp := b.do(t, "POST", path, `{"since":"`+ts(now.Add(-time.Hour))+`"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("recover of the last hour: %d", resp.StatusCode)
	}
}
