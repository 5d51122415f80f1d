package storetest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// attemptCountTests check the stats and the charts' counts against a count of the attempts
// themselves, on random windows: a store may keep counts by hour (both of this module's do), and
// must answer exactly as counting every attempt would, whatever the window's edges.
var attemptCountTests = []test{
	{"EqualRawCountsOnRandomWindows", func(t *testing.T, f *fixture) {
		rng := rand.New(rand.NewPCG(28, 18))
		app, other := f.newApp(), f.newApp()
		eps := []hookd.Endpoint{f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(other.ID)}
		var ds []hookd.Delivery
		for range 20 {
			ep := eps[rng.IntN(len(eps))]
			ds = append(ds, f.newDelivery(f.newMessage(ep.AppID), ep.ID))
		}
		// 600 attempts over 30 hours, half of them in three hours, recorded in batches of up to 40.
		// Their ids are shuffled against their times, as a clock other than the ids' (Config.Now)
		// makes them: an hour's ids may then reach into its neighbours'.
		h0 := base.Truncate(time.Hour)
		span := 30 * time.Hour
		var all []hookd.Attempt
		ids := make([]string, 600)
		for i := range ids {
			ids[i] = newID("atmpt_")
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for i := range ids {
			when := h0.Add(time.Duration(rng.Int64N(int64(span))).Truncate(time.Microsecond))
			if i%2 == 0 {
				when = h0.Add(time.Duration(10+rng.IntN(3))*time.Hour + time.Duration(rng.Int64N(int64(time.Hour))).Truncate(time.Microsecond))
			}
			if i%50 == 0 {
				when = h0.Add(time.Duration(rng.IntN(30)) * time.Hour) // on the hour
			}
			a := attempt(ds[rng.IntN(len(ds))], 1, when)
			a.ID = ids[i]
			if rng.IntN(4) > 0 {
				succeeded(&a)
			}
			all = append(all, a)
		}
		attempts := slices.Clone(all)
		for len(all) > 0 {
			n := min(len(all), 1+rng.IntN(40))
			recs := make([]hookd.AttemptRecord, n)
			for i, a := range all[:n] {
				recs[i] = hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryPending}
			}
			f.record(recs...)
			all = all[n:]
		}
		// A time in the span or just outside it: on the hour, a microsecond either side of
		// one, or anywhere.
		randTime := func() time.Time {
			t := h0.Add(time.Duration(rng.Int64N(int64(span+2*time.Hour))) - time.Hour)
			switch rng.IntN(4) {
			case 0:
				return t.Truncate(time.Hour)
			case 1:
				return t.Truncate(time.Hour).Add(time.Duration(rng.IntN(3)-1) * time.Microsecond)
			}
			return t.Truncate(time.Microsecond)
		}
		randFromID := func() string {
			switch rng.IntN(3) {
			case 0:
				return ""
			case 1:
				return attempts[rng.IntN(len(attempts))].ID
			}
			return hookd.AttemptIDFloor(randTime())
		}
		for i := range 150 {
			since, until := randTime(), randTime()
			if i%10 == 0 {
				until = since.Add(time.Duration(rng.IntN(90)) * time.Minute)
			}
			ep := eps[rng.IntN(len(eps))]
			var want hookd.EndpointStats
			for _, a := range attempts {
				if a.EndpointID == ep.ID && !a.At.Before(since) && a.At.Before(until) {
					if a.Success {
						want.Success++
					} else {
						want.Fail++
					}
				}
			}
			got, err := f.store.EndpointStats(f.ctx, ep.ID, since, until)
			f.noErr(err)
			if *got != want {
				t.Fatalf("EndpointStats(%s, %s, %s) = %+v, the attempts count %+v", ep.ID, since, until, *got, want)
			}

			filter := hookd.AttemptStatsFilter{AppID: app.ID, Since: randTime(), FromID: randFromID()}
			wantHours := map[time.Time]hookd.HourCount{}
			wantByEndpoint := map[string]hookd.AttemptCount{}
			for _, a := range attempts {
				if a.AppID != app.ID || a.At.Before(filter.Since) || a.ID < filter.FromID {
					continue
				}
				h := a.At.UTC().Truncate(time.Hour)
				hc, ac := wantHours[h], wantByEndpoint[a.EndpointID]
				hc.Hour = h
				if a.Success {
					hc.Succeeded++
					ac.Succeeded++
				} else {
					hc.Failed++
					ac.Failed++
				}
				wantHours[h], wantByEndpoint[a.EndpointID] = hc, ac
			}
			hours, err := f.store.AttemptsPerHour(f.ctx, filter)
			f.noErr(err)
			equal(t, "application's hours", sortedHours(wantHours), orNil(hours))

			filter.EndpointID = eps[rng.IntN(3)].ID
			wantEndpointHours := map[time.Time]hookd.HourCount{}
			for _, a := range attempts {
				if a.EndpointID != filter.EndpointID || a.At.Before(filter.Since) || a.ID < filter.FromID {
					continue
				}
				h := a.At.UTC().Truncate(time.Hour)
				hc := wantEndpointHours[h]
				hc.Hour = h
				if a.Success {
					hc.Succeeded++
				} else {
					hc.Failed++
				}
				wantEndpointHours[h] = hc
			}
			hours, err = f.store.AttemptsPerHour(f.ctx, filter)
			f.noErr(err)
			equal(t, "endpoint's hours", sortedHours(wantEndpointHours), orNil(hours))

			if ec, ok := f.store.(hookd.EndpointAttemptCounter); ok {
				filter.EndpointID = ""
				got, err := ec.AttemptsByEndpoint(f.ctx, filter, []string{eps[0].ID, eps[1].ID, eps[2].ID, eps[3].ID})
				f.noErr(err)
				equal(t, "counts by endpoint", wantByEndpoint, got)
			}
		}
	}},
}

func sortedHours(m map[time.Time]hookd.HourCount) []hookd.HourCount {
	out := make([]hookd.HourCount, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b hookd.HourCount) int { return a.Hour.Compare(b.Hour) })
	if len(out) == 0 {
		return nil
	}
	return out
}

func orNil(hs []hookd.HourCount) []hookd.HourCount {
	if len(hs) == 0 {
		return nil
	}
	return hs
}
