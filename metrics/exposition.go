package metrics

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/buildinfo"
)

// write writes every family to b: the counters, then the backlog read from the store.
func (m *Metrics) write(ctx context.Context, b *bytes.Buffer) {
	writeBuildInfo(b, buildinfo.Read())
	m.writeCounters(b)
	if m.backlog == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.ScrapeTimeout)
	defer cancel()
	pending, err := m.backlog.PendingSummary(ctx)
	if err != nil {
		m.cfg.Logger.Warn("metrics: read the backlog", "error", err)
		family(b, "hookd_store_up", "gauge", "1 when this scrape read the backlog from the store.")
		sample(b, "hookd_store_up", nil, 0)
		return
	}
	m.writeBacklog(b, pending)
	family(b, "hookd_store_up", "gauge", "1 when this scrape read the backlog from the store.")
	sample(b, "hookd_store_up", nil, 1)
}

// writeBuildInfo writes the one hookd_build_info sample, whose labels name the running build.
func writeBuildInfo(b *bytes.Buffer, info buildinfo.Info) {
	family(b, "hookd_build_info", "gauge", "Always 1; the labels name the running build: module version, VCS revision, Go version.")
	sample(b, "hookd_build_info", []string{"version", info.Version, "revision", info.Revision, "goversion", info.GoVersion}, 1)
}

func (m *Metrics) writeCounters(b *bytes.Buffer) {
	m.mu.Lock()
	attempts := make([]attemptKey, 0, len(m.attempts))
	for k := range m.attempts {
		attempts = append(attempts, k)
	}
	slices.SortFunc(attempts, func(x, y attemptKey) int {
		return cmp.Or(cmp.Compare(x.trigger, y.trigger), cmp.Compare(x.outcome, y.outcome))
	})
	attemptCounts := make([]uint64, len(attempts))
	for i, k := range attempts {
		attemptCounts[i] = m.attempts[k]
	}
	statuses := make([]hookd.DeliveryStatus, 0, len(m.deliveries))
	for s := range m.deliveries {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	deliveryCounts := make([]uint64, len(statuses))
	for i, s := range statuses {
		deliveryCounts[i] = m.deliveries[s]
	}
	buckets := slices.Clone(m.buckets)
	sum, count := m.durSum, m.durCount
	retention := m.retention
	m.mu.Unlock()
	var deleted hookd.RetentionCount
	if retention != nil {
		deleted = retention()
	}

	family(b, "hookd_attempts_total", "counter", "Attempts recorded, by trigger (scheduled, manual) and outcome (success, gone, throttled, redirect, failure, error: no response).")
	for i, k := range attempts {
		sample(b, "hookd_attempts_total", []string{"trigger", string(k.trigger), "outcome", k.outcome}, float64(attemptCounts[i]))
	}
	family(b, "hookd_attempt_duration_seconds", "histogram", "Time of one attempt, from connecting to reading the response.")
	var cum uint64
	for i, le := range durationBuckets {
		cum += buckets[i]
		sample(b, "hookd_attempt_duration_seconds_bucket", []string{"le", formatFloat(le)}, float64(cum))
	}
	sample(b, "hookd_attempt_duration_seconds_bucket", []string{"le", "+Inf"}, float64(count))
	sample(b, "hookd_attempt_duration_seconds_sum", nil, sum)
	sample(b, "hookd_attempt_duration_seconds_count", nil, float64(count))
	family(b, "hookd_deliveries_total", "counter", "Deliveries ended by a scheduled attempt, by status (delivered, failed: schedule exhausted, cancelled: HTTP 410).")
	for i, s := range statuses {
		sample(b, "hookd_deliveries_total", []string{"status", string(s)}, float64(deliveryCounts[i]))
	}
	family(b, "hookd_retention_deleted_total", "counter", "Rows the retention cleaner deleted, by kind (messages, deliveries, attempts).")
	sample(b, "hookd_retention_deleted_total", []string{"kind", "attempts"}, float64(deleted.Attempts))
	sample(b, "hookd_retention_deleted_total", []string{"kind", "deliveries"}, float64(deleted.Deliveries))
	sample(b, "hookd_retention_deleted_total", []string{"kind", "messages"}, float64(deleted.Messages))
}

func (m *Metrics) writeBacklog(b *bytes.Buffer, pending []hookd.PendingEndpoint) {
	now := m.cfg.Now()
	total, oldest := 0, 0.0
	for _, p := range pending {
		total += p.Pending
		oldest = max(oldest, age(now, p))
	}
	family(b, "hookd_pending_deliveries", "gauge", "Deliveries pending (queued or waiting for a retry), all endpoints.")
	sample(b, "hookd_pending_deliveries", nil, float64(total))
	family(b, "hookd_oldest_pending_seconds", "gauge", "Age of the oldest pending delivery; 0 when none is pending.")
	sample(b, "hookd_oldest_pending_seconds", nil, oldest)

	shown := pending
	if n := m.cfg.MaxEndpoints; n > 0 && len(shown) > n {
		shown = slices.Clone(shown)
		slices.SortStableFunc(shown, func(x, y hookd.PendingEndpoint) int { return x.Oldest.Compare(y.Oldest) })
		shown = shown[:n]
		slices.SortFunc(shown, func(x, y hookd.PendingEndpoint) int { return strings.Compare(x.EndpointID, y.EndpointID) })
	}
	family(b, "hookd_endpoint_pending_deliveries", "gauge", "Deliveries pending for one endpoint.")
	for _, p := range shown {
		sample(b, "hookd_endpoint_pending_deliveries", []string{"app_id", p.AppID, "endpoint_id", p.EndpointID}, float64(p.Pending))
	}
	family(b, "hookd_endpoint_oldest_pending_seconds", "gauge", "Age of one endpoint's oldest pending delivery.")
	for _, p := range shown {
		sample(b, "hookd_endpoint_oldest_pending_seconds", []string{"app_id", p.AppID, "endpoint_id", p.EndpointID}, age(now, p))
	}
}

// age is how long ago p's oldest pending delivery was created, in seconds, never below 0.
func age(now time.Time, p hookd.PendingEndpoint) float64 {
	return max(now.Sub(p.Oldest).Seconds(), 0)
}

// family writes a family's HELP and TYPE lines.
func family(b *bytes.Buffer, name, typ, help string) {
	b.WriteString("# HELP ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(escapeHelp(help))
	b.WriteString("\n# TYPE ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(typ)
	b.WriteByte('\n')
}

// sample writes one sample; labels are name, value pairs.
func sample(b *bytes.Buffer, name string, labels []string, v float64) {
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(escapeLabel(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

// formatFloat writes a value as the format wants it: shortest form, +Inf, -Inf, NaN.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
