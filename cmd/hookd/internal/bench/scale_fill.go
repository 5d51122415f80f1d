package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/localclient"
)

// FillOptions configure "hookd bench fill".
type FillOptions struct {
	// DB is the database: sqlite:PATH (or a bare path) or postgres://USER@HOST:PORT/DATABASE. A
	// PostgreSQL database that does not exist is created.
	DB string
	// Schema is the PostgreSQL schema hookd's tables go in (created if missing); "": the URL's
	// search_path, normally public.
	Schema string
	// Messages is the number of messages the database holds when the fill ends.
	Messages int
	// Days is the span the messages' creation times are spread over, ending when the fill began.
	Days int
	// Seed makes the shape: the same seed gives the same applications, endpoints and messages.
	Seed uint64
	// Producers is the number of goroutines calling Send at once (hookd batches their sends).
	Producers int
	// Progress, when set, gets a line every few seconds.
	Progress io.Writer
	// Logger is the client's and the store's; nil: discard.
	Logger *slog.Logger
}

// DefaultFillOptions are the fill's defaults: a million messages over 30 days.
func DefaultFillOptions() FillOptions {
	return FillOptions{Messages: 1_000_000, Days: 30, Seed: 1, Producers: 32}
}

// FillReport is what a fill did and what the database holds after it.
type FillReport struct {
	DB       string `json:"db"`
	Resumed  bool   `json:"resumed"`  // the database held an earlier fill of this shape, which this one continued
	Stopped  bool   `json:"stopped"`  // interrupted before reaching the target
	Target   int    `json:"target"`   // --messages
	Existing int64  `json:"existing"` // messages the database held before
	Sent     int64  `json:"sent"`     // messages this run sent
	// Seconds is the time from the first send to the last delivery settled (or the drain's end);
	// MessagesPerSec is Sent over it.
	Seconds        float64     `json:"seconds"`
	SendSeconds    float64     `json:"sendSeconds"` // the time until the last send returned
	MessagesPerSec float64     `json:"messagesPerSec"`
	Seed           uint64      `json:"seed"`
	Days           int         `json:"days"`
	Start          time.Time   `json:"start"` // the clock's first instant (the first message's time)
	Counts         ScaleCounts `json:"counts"`
	Size           ScaleSize   `json:"size"`
	// BytesPerMessage is Size.Total over Counts.Messages.
	BytesPerMessage float64 `json:"bytesPerMessage"`
}

// fillMeta keys, in the metadata of the largest application: what a later fill of the same
// database continues with.
const (
	metaStart = "scale.start"
	metaDays  = "scale.days"
	metaSeed  = "scale.seed"
	metaPort  = "scale.port"
	metaTotal = "scale.messages"
)

// fillClock is Config.Now of a fill: it runs from start over span as messages are handed out,
// so the n-th of total messages is made at start + span*n/total, whatever the fill's real rate.
// Attempts and retries are stamped with the clock of the moment they are recorded.
type fillClock struct {
	start time.Time
	span  time.Duration
	total int64
	n     atomic.Int64
}

func (c *fillClock) Now() time.Time {
	return c.start.Add(time.Duration(float64(c.span) * float64(c.n.Load()) / float64(c.total)))
}

// fillWindow bounds the deliveries sent but not yet settled at the receiver, so that attempts
// follow their messages closely on the fill's clock.
const fillWindow = 4000

// Fill fills the database of o to o.Messages messages through hookd.Client.Send, with the
// shape of scale_shape.go. A database that holds an earlier fill is continued: its clock, seed
// and receiver port are read back from the largest application's metadata. When ctx ends it
// stops sending, lets the deliveries in flight settle for a few seconds, and reports what it did.
func Fill(ctx context.Context, o FillOptions) (*FillReport, error) {
	if o.Messages < 1 || o.Days < 1 || o.Producers < 1 {
		return nil, usageErrorf("", "--messages, --days and --producers must be at least 1")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	db, err := parseScaleDB(o.DB, o.Schema)
	if err != nil {
		return nil, err
	}
	if err := db.create(ctx); err != nil {
		return nil, err
	}
	store, err := db.openStore(ctx, logger)
	if err != nil {
		return nil, failf("", "open %s: %v", db, err)
	}
	defer store.Close()
	q, err := db.query(ctx)
	if err != nil {
		return nil, failf("", "open %s for counts: %v", db, err)
	}
	defer q.close()

	clock := &fillClock{span: time.Duration(o.Days) * 24 * time.Hour, total: int64(o.Messages)}
	rep := &FillReport{DB: db.String(), Target: o.Messages, Seed: o.Seed, Days: o.Days}
	cfg := fillConfig(clock, logger)
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		return nil, err
	}

	// An earlier fill: continue its clock with its seed.
	port := 0
	app0, err := c.GetApplication(ctx, appUID(0))
	switch {
	case err == nil:
		rep.Resumed = true
		md := app0.Metadata
		start, err1 := time.Parse(time.RFC3339Nano, md[metaStart])
		days, err2 := strconv.Atoi(md[metaDays])
		seed, err3 := strconv.ParseUint(md[metaSeed], 10, 64)
		p, err4 := strconv.Atoi(md[metaPort])
		total, err5 := strconv.Atoi(md[metaTotal])
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return nil, failf("", "%s holds application %s, but not the metadata of a fill (%v): fill a new database", db, appUID(0), err)
		}
		rep.Seed, rep.Days, port = seed, days, p
		clock.start, clock.span, clock.total = start, time.Duration(days)*24*time.Hour, int64(max(total, o.Messages))
		n, err := q.count(ctx, "SELECT count(*) FROM hookd_messages")
		if err != nil {
			return nil, failf("", "count the messages: %v", err)
		}
		rep.Existing = n
	case errors.Is(err, hookd.ErrNotFound):
		clock.start = time.Now().UTC().Truncate(time.Second).Add(-clock.span)
	default:
		return nil, failf("", "read %s: %v", db, err)
	}
	rep.Start = clock.start
	clock.n.Store(rep.Existing)

	// The endpoints' URLs name the earlier fill's port: listen on it again, or, when another
	// process holds it now, on a new one that fillSetup moves the endpoints to.
	recv, err := startFillReceiver(rep.Seed, port)
	if err != nil && port != 0 {
		recv, err = startFillReceiver(rep.Seed, 0)
	}
	if err != nil {
		return nil, failf("", "receiver on 127.0.0.1: %v", err)
	}
	defer recv.close()
	// The workers run until Stop, not until ctx ends: the deliveries in flight settle first.
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	stopClient := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c.Stop(sctx)
	}
	defer stopClient()

	apps, err := fillSetup(ctx, c, recv, rep, clock)
	if err != nil {
		return nil, failf("", "set up the applications: %v", err)
	}

	// The producers: each takes the next message number and sends it.
	begin := time.Now()
	var (
		sent, deliveries atomic.Int64
		next             = rep.Existing
		mu               sync.Mutex
		sendErr          error
		wg               sync.WaitGroup
	)
	settled := func() int64 { return recv.ok.Load() + recv.permanent.Load()/int64(len(fillSchedule)+1) }
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()
	for range o.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sendCtx.Err() == nil {
				for deliveries.Load()-settled() > fillWindow && sendCtx.Err() == nil {
					time.Sleep(2 * time.Millisecond)
				}
				mu.Lock()
				seq := next
				next++
				if seq < int64(o.Messages) {
					clock.n.Store(seq) // under mu: the clock never steps back
				}
				mu.Unlock()
				if seq >= int64(o.Messages) {
					return
				}
				p := planMessage(rep.Seed, int(seq))
				in := &hookd.MessageIn{EventType: p.eventType, Payload: p.payload, Tags: p.tags}
				if p.channel != "" {
					in.Channels = []string{p.channel}
				}
				res, err := c.Send(sendCtx, apps[p.app], in)
				if err != nil {
					if sendCtx.Err() == nil {
						mu.Lock()
						sendErr = errors.Join(sendErr, fmt.Errorf("send message %d: %w", seq, err))
						mu.Unlock()
						stopSending()
					}
					return
				}
				sent.Add(1)
				deliveries.Add(int64(res.Deliveries))
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	last, lastAt, ticks := int64(0), begin, 0
wait:
	for {
		select {
		case <-done:
			break wait
		case now := <-tick.C:
			ticks++
			if q.postgres && ticks%12 == 0 {
				// PostgreSQL's autovacuum may be off (or slow to start): the queue's table would
				// fill with dead rows and every claim slow down (docs/install.md).
				if _, err := q.db.ExecContext(ctx, "VACUUM hookd_jobs"); err != nil && ctx.Err() == nil {
					logger.Warn("vacuum hookd_jobs", "err", err)
				}
			}
			if o.Progress != nil {
				s := sent.Load()
				fmt.Fprintf(o.Progress, "fill: %d of %d messages (%.0f/s now, %.0f/s overall), %d deliveries, %d answered 200, %d failed attempts; clock %s\n",
					rep.Existing+s, o.Messages, float64(s-last)/now.Sub(lastAt).Seconds(), float64(s)/now.Sub(begin).Seconds(),
					deliveries.Load(), recv.ok.Load(), recv.failed.Load()+recv.permanent.Load(), clock.Now().Format(time.DateTime))
				last, lastAt = s, now
			}
		}
	}
	rep.Stopped = ctx.Err() != nil
	if sendErr != nil && !rep.Stopped {
		return nil, failf("", "%v", sendErr)
	}
	rep.SendSeconds = time.Since(begin).Seconds()
	// Let the deliveries settle (retries wait at most 1 s each): up to 2 minutes, or 10 seconds
	// once interrupted.
	deadline := time.Now().Add(2 * time.Minute)
	if rep.Stopped {
		deadline = time.Now().Add(10 * time.Second)
	}
	for {
		n, err := q.count(context.WithoutCancel(ctx), "SELECT count(*) FROM hookd_deliveries WHERE status = 'pending'")
		if (err == nil && n == 0) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			if !rep.Stopped {
				rep.Stopped = true
				if d := time.Now().Add(10 * time.Second); d.Before(deadline) {
					deadline = d
				}
			}
			time.Sleep(250 * time.Millisecond)
		case <-time.After(250 * time.Millisecond):
		}
	}
	rep.Sent = sent.Load()
	rep.Seconds = time.Since(begin).Seconds()
	rep.MessagesPerSec = float64(rep.Sent) / rep.Seconds
	stopClient()
	if err := store.Close(); err != nil {
		return nil, failf("", "close %s: %v", db, err)
	}
	cctx := context.WithoutCancel(ctx)
	if q.postgres {
		// The planner's statistics, which autovacuum (when on) would gather in time.
		if _, err := q.db.ExecContext(cctx, "ANALYZE"); err != nil {
			return nil, failf("", "analyze %s: %v", db, err)
		}
	}
	if rep.Counts, err = q.counts(cctx); err != nil {
		return nil, failf("", "count %s: %v", db, err)
	}
	if rep.Size, err = db.size(cctx, q); err != nil {
		return nil, failf("", "size of %s: %v", db, err)
	}
	if rep.Counts.Messages > 0 {
		rep.BytesPerMessage = float64(rep.Size.Total) / float64(rep.Counts.Messages)
	}
	return rep, nil
}

// fillSchedule is the fill's retry schedule: short, so that retried and failed deliveries
// settle within the fill, which runs far faster than the clock it stamps.
var fillSchedule = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, time.Second}

// fillConfig is the client's configuration: receivers on 127.0.0.1, the short schedule, no
// circuit breaker and no disabling, which would cut the permanently failing deliveries short.
func fillConfig(clock *fillClock, logger *slog.Logger) *hookd.Config {
	cfg := localclient.Config(5*time.Second, fillSchedule...)
	cfg.Logger = logger
	cfg.Now = clock.Now
	cfg.CircuitThreshold = -1
	cfg.DisableAfter = -1
	return cfg
}

// fillSetup creates (or, when resuming, finds) the event types, applications and endpoints,
// and returns the applications' ids, largest first.
func fillSetup(ctx context.Context, c *hookd.Client, recv *fillReceiver, rep *FillReport, clock *fillClock) ([]string, error) {
	if !rep.Resumed {
		for i, name := range eventTypes {
			if _, err := c.UpsertEventType(ctx, &hookd.EventType{Name: name, Description: fmt.Sprintf("Event type %d of the scale fill", i+1)}); err != nil {
				return nil, err
			}
		}
	}
	ids := make([]string, shapeApps)
	for k := range shapeApps {
		a, err := c.GetApplication(ctx, appUID(k))
		if err == nil {
			ids[k] = a.ID
			if err := moveEndpoints(ctx, c, a, k, recv); err != nil {
				return nil, err
			}
			continue
		}
		if !errors.Is(err, hookd.ErrNotFound) {
			return nil, err
		}
		in := &hookd.ApplicationIn{Name: fmt.Sprintf("Scale customer %03d", k), UID: appUID(k)}
		if k == 0 {
			in.Metadata = map[string]string{
				metaStart: clock.start.Format(time.RFC3339Nano), metaDays: strconv.Itoa(rep.Days),
				metaSeed: strconv.FormatUint(rep.Seed, 10), metaPort: strconv.Itoa(recv.port()),
				metaTotal: strconv.Itoa(rep.Target),
			}
		}
		a, err = c.CreateApplication(ctx, in)
		if err != nil {
			return nil, err
		}
		ids[k] = a.ID
		for j := range endpointCount(k) {
			types, chans := endpointShape(j)
			_, err := c.CreateEndpoint(ctx, a.ID, &hookd.EndpointIn{
				URL: recv.url(k, j), UID: fmt.Sprintf("ep-%d", j), Description: fmt.Sprintf("Endpoint %d of customer %03d", j, k),
				EventTypes: types, Channels: chans,
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}

// moveEndpoints points the endpoints of application a (the k-th) at recv when an earlier fill's
// receiver listened on another port, and records the port in the largest application's metadata.
func moveEndpoints(ctx context.Context, c *hookd.Client, a *hookd.Application, k int, recv *fillReceiver) error {
	if k == 0 {
		if a.Metadata[metaPort] == strconv.Itoa(recv.port()) {
			return nil
		}
		md := maps.Clone(a.Metadata)
		md[metaPort] = strconv.Itoa(recv.port())
		if _, err := c.UpdateApplication(ctx, a.ID, &hookd.ApplicationIn{Name: a.Name, UID: a.UID, Metadata: md}); err != nil {
			return err
		}
	}
	for j := range endpointCount(k) {
		ep, err := c.GetEndpoint(ctx, a.ID, fmt.Sprintf("ep-%d", j))
		if err != nil {
			return err
		}
		if ep.URL == recv.url(k, j) {
			continue
		}
		types, chans := endpointShape(j)
		if _, err := c.UpdateEndpoint(ctx, a.ID, ep.ID, &hookd.EndpointIn{
			URL: recv.url(k, j), UID: ep.UID, Description: ep.Description, EventTypes: types, Channels: chans,
		}); err != nil {
			return err
		}
	}
	return nil
}

// Text is the report for people.
func (r *FillReport) Text() string {
	var b []byte
	state := "filled"
	if r.Stopped {
		state = "stopped"
	}
	b = fmt.Appendf(b, "hookd bench fill: %s %s (seed %d, %d days from %s)\n", state, r.DB, r.Seed, r.Days, r.Start.Format(time.DateTime))
	if r.Resumed {
		b = fmt.Appendf(b, "  continued a fill that held %d messages\n", r.Existing)
	}
	b = fmt.Appendf(b, "  sent %d messages in %.1f s (the last send after %.1f s), every delivery settled or the wait ended: %.0f messages/s (target %d)\n",
		r.Sent, r.Seconds, r.SendSeconds, r.MessagesPerSec, r.Target)
	c := r.Counts
	b = fmt.Appendf(b, "  holds %d applications, %d endpoints, %d messages (largest application %d), %d deliveries (%.2f per message; %d failed, %d pending), %d attempts (%d failed, %.1f %%)\n",
		c.Applications, c.Endpoints, c.Messages, c.LargestApp, c.Deliveries, ratio(c.Deliveries, c.Messages), c.FailedDeliveries, c.PendingDeliveries,
		c.Attempts, c.FailedAttempts, 100*ratio(c.FailedAttempts, c.Attempts))
	b = fmt.Appendf(b, "  %.1f %% of messages on channels, %.1f %% tagged; created from %s to %s\n",
		100*ratio(c.OnChannels, c.Messages), 100*ratio(c.Tagged, c.Messages), c.First.Format(time.DateTime), c.Last.Format(time.DateTime))
	b = fmt.Appendf(b, "  size %s (%.0f bytes per message)\n", r.Size.text(), r.BytesPerMessage)
	return string(b)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
