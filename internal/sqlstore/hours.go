package sqlstore

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// The stores' hourly attempt counts (hookd_endpoint_hours): how a batch of records folds into
// buckets, and how a window of attempt times splits into whole hours, read from the counts, and
// the hours it covers in part, read from the attempts.

// HourMicros is an hour in microseconds, the unit of the counts' hour (hours since 1970).
const HourMicros = int64(time.Hour / time.Microsecond)

// HourBucket is one endpoint's attempts in one hour, as a batch of records adds them, with the
// least and greatest attempt id, which bound the hour's attempts in the endpoint's index.
type HourBucket struct {
	EndpointID string
	Hour       int64
	AppID      string
	Succeeded  int
	Failed     int
	MinID      string
	MaxID      string
}

// FoldHours sums recs by endpoint and hour, ordered by both: two processes recording at once
// lock the rows they share in one order.
func FoldHours(recs []hookd.AttemptRecord) []HourBucket {
	type key struct {
		ep   string
		hour int64
	}
	var out []HourBucket
	at := make(map[key]int, 4)
	for i := range recs {
		a := &recs[i].Attempt
		k := key{a.EndpointID, a.At.UnixMicro() / HourMicros}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, HourBucket{EndpointID: a.EndpointID, Hour: k.hour, AppID: a.AppID, MinID: a.ID, MaxID: a.ID})
		}
		b := &out[j]
		if a.Success {
			b.Succeeded++
		} else {
			b.Failed++
		}
		b.MinID, b.MaxID = min(b.MinID, a.ID), max(b.MaxID, a.ID)
	}
	slices.SortFunc(out, func(x, y HourBucket) int {
		if c := strings.Compare(x.EndpointID, y.EndpointID); c != 0 {
			return c
		}
		return cmp.Compare(x.Hour, y.Hour)
	})
	return out
}

// HourSpan is how a window [since, until) of attempt times (in microseconds) splits into whole
// hours [Full, FullEnd), read from the counts, and the hours it covers in part, Lead and Trail
// (NoHour when none), read from the attempts.
type HourSpan struct {
	Full, FullEnd, Lead, Trail int64
}

// NoHour is an hour no attempt is in.
const NoHour = -1

// SpanOf splits the window [since, until) of microseconds into hours.
func SpanOf(since, until int64) HourSpan {
	s := HourSpan{Full: since / HourMicros, FullEnd: until / HourMicros, Lead: NoHour, Trail: NoHour}
	if since%HourMicros != 0 {
		s.Lead = since / HourMicros
		s.Full++
	}
	if until%HourMicros != 0 {
		s.Trail = until / HourMicros
	}
	return s
}
