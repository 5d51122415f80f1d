package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// maxSendPayload bounds what "hookd send" reads; the server enforces its own, smaller limit.
const maxSendPayload = 16 << 20

const sendUsage = `send APP --event-type T [--event-id ID] [--channel C ...] [--data JSON | --data @file] [--wait D] < payload

Sends a message to the application APP (its id or uid): hookd signs it and
delivers it to every endpoint subscribed to its event type and channels.
The payload is a JSON object: --data '{"id":"in_1"}', --data @payload.json,
or, without --data, read from stdin. With --wait it returns once the message
is delivered to every endpoint (retries included), or after D with exit
code 1, saying how many endpoints have it.`

// runSend handles "hookd send".
func runSend(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "send", sendUsage+clientHelp)
	eventType := f.String("event-type", "", "the message's event type, e.g. invoice.paid (required)")
	eventID := f.String("event-id", "", "your unique id for the event; a second send with it is rejected (optional)")
	var channels stringList
	f.Var(&channels, "channel", "a channel the message is sent on; repeat for several (optional)")
	data := f.String("data", "", "the JSON payload, or @file to read it from a file (default: stdin)")
	wait := f.Duration("wait", 0, "wait at most this long for the message to be delivered to every endpoint; exit 1 if it is not (default 0: return once sent)")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	if *eventType == "" {
		return usageErrorf(`e.g. hookd send acme --event-type invoice.paid --data '{"id":"in_1"}'`, "send: --event-type is required")
	}
	if *wait < 0 {
		return usageErrorf(`e.g. --wait 10s`, "send: --wait must be 0 or more, got %s", *wait)
	}
	if *eventID != "" && !svixIDPattern.MatchString(*eventID) {
		return usageErrorf(fmt.Sprintf("use only those characters, e.g. --event-id %s", strings.Map(func(r rune) rune {
			if svixIDPattern.MatchString(string(r)) {
				return r
			}
			return '.'
		}, *eventID)), "send: --event-id %q is refused by the API: an event id is 1 to 256 of the characters a-z A-Z 0-9 - _ . (Svix's pattern %s)", *eventID, svixIDPatternText)
	}
	payload, err := readPayload(e, f, *data)
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	in := &svix.MessageIn{EventType: *eventType, Payload: payload, Channels: channels}
	if *eventID != "" {
		in.EventId = eventID
	}
	msg, err := c.sdk.Message.CreateWithOptions(ctx, pos[0], in, once())
	if err != nil {
		return c.failAt(ctx, "send to "+pos[0], target{app: pos[0]}, err)
	}
	var n int
	var dest destinations
	if *wait > 0 {
		dest, err = c.waitDestinations(ctx, pos[0], msg.Id, *wait)
		n = dest.total
	} else {
		n, err = c.countDestinations(ctx, pos[0], msg.Id)
	}
	if err != nil {
		return err
	}
	if err := c.printSent(msg, n, dest, *wait > 0); err != nil {
		return err
	}
	if *wait > 0 && dest.delivered < dest.total {
		return failf(fmt.Sprintf("hookd attempts %s --msg %s shows each attempt", pos[0], msg.Id),
			"send: message %s was sent, but after %s it is delivered to %d of %d endpoints (%d failed, %d still pending)",
			msg.Id, *wait, dest.delivered, dest.total, dest.failed, dest.open())
	}
	return nil
}

// printSent prints the message sent, the number of endpoints it goes to, and with --wait how its
// deliveries stand.
func (c *conn) printSent(msg *svix.MessageOut, n int, dest destinations, waited bool) error {
	if c.json {
		m, err := msg.ToMap()
		if err != nil {
			return failf("", "send: %v", err)
		}
		m["endpointCount"] = n
		if waited {
			m["deliveredCount"], m["failedCount"] = dest.delivered, dest.failed
		}
		return c.printJSON(m)
	}
	fields := [][2]string{
		{"id", msg.Id},
		{"event type", msg.EventType},
		{"event id", orDash(deref(msg.EventId))},
		{"channels", joinOr(msg.Channels, "-")},
		{"timestamp", formatTime(msg.Timestamp)},
		{"endpoints", endpointsSent(n)},
	}
	if waited {
		fields = append(fields, [2]string{"delivered", dest.String()})
	}
	c.printFields(fields...)
	return nil
}

// svixIDPattern is the pattern of the API's ids and names given by the caller (uid, eventId), as
// in Svix's server.
var svixIDPattern = regexp.MustCompile(`^[a-zA-Z0-9\-_.]{1,256}$`)

// svixIDPatternText is the pattern as Svix's API documents it, the length aside.
const svixIDPatternText = `^[a-zA-Z0-9\-_.]+$`

// countDestinations counts the endpoints the message goes to: the deliveries the server wrote
// with the message, in the same transaction, one per endpoint whose filter and channels matched
// (the message's attempted destinations). The count is exact from the moment the send returns,
// before any attempt is made.
func (c *conn) countDestinations(ctx context.Context, app, msg string) (int, error) {
	n := 0
	var iter *string
	for {
		limit := int32(maxPageSize)
		l, err := c.sdk.MessageAttempt.ListAttemptedDestinations(ctx, app, msg, &svix.MessageAttemptListOptions{Iterator: iter, Limit: &limit})
		if err != nil {
			return 0, c.failAt(ctx, "count the endpoints message "+msg+" goes to", target{app: app, msg: msg}, err)
		}
		n += len(l.Data)
		next := l.Iterator.Get()
		if l.Done || next == nil || *next == "" || len(l.Data) == 0 || (iter != nil && *next == *iter) {
			return n, nil
		}
		iter = next
	}
}

// endpointsSent says how many endpoints a message goes to, and what was counted.
func endpointsSent(n int) string {
	switch n {
	case 0:
		return "0: no endpoint subscribes to its event type and channels (counted from the deliveries the server created)"
	case 1:
		return "1 (counted from the deliveries the server created for it)"
	}
	return strconv.Itoa(n) + " (counted from the deliveries the server created for it)"
}

// runMessage handles "hookd message get".
func runMessage(ctx context.Context, e *env, args []string) error {
	return runGroup(ctx, e, "message", "Shows one message of an application (\"hookd messages APP\" lists them).", []subcommand{
		{"get", "show one message with its payload (message get APP MSG)", runMessageGet},
	}, args)
}

func runMessageGet(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "message get", "message get APP MSG\n\nShows the message MSG (its id or event id) of the application APP (its id or uid),\nwith its payload."+clientHelp)
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP", "MSG")
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	// The route is called directly, not through the SDK, whose MessageOut decodes the payload's
	// numbers into float64: the payload is shown byte for byte as the server keeps it.
	var msg struct {
		ID        string          `json:"id"`
		EventType string          `json:"eventType"`
		EventID   *string         `json:"eventId"`
		Channels  []string        `json:"channels"`
		Tags      []string        `json:"tags"`
		Timestamp time.Time       `json:"timestamp"`
		Payload   json.RawMessage `json:"payload"`
	}
	op := "get message " + pos[1]
	if err := c.hookdCall(ctx, op, http.MethodGet, "/api/v1/app/"+url.PathEscape(pos[0])+"/msg/"+url.PathEscape(pos[1]), nil, &msg); err != nil {
		return c.failAt(ctx, op, target{app: pos[0], msg: pos[1]}, err)
	}
	if c.json {
		return c.printJSON(msg)
	}
	var payload bytes.Buffer
	if err := json.Indent(&payload, msg.Payload, "", "  "); err != nil {
		payload.Reset()
		payload.Write(msg.Payload)
	}
	c.printFields(
		[2]string{"id", msg.ID},
		[2]string{"event type", msg.EventType},
		[2]string{"event id", orDash(deref(msg.EventID))},
		[2]string{"channels", joinOr(msg.Channels, "-")},
		[2]string{"tags", joinOr(msg.Tags, "-")},
		[2]string{"timestamp", formatTime(msg.Timestamp)},
	)
	fmt.Fprintf(e.stdout, "payload:\n%s\n", payload.String())
	return nil
}

// readPayload reads the payload from --data, a file (@path) or stdin, and checks that it is one
// JSON object. Numbers keep their digits (json.Number), so big ids survive.
func readPayload(e *env, f *flags, data string) (map[string]any, error) {
	hint := fmt.Sprintf("run \"%s --help\" for the ways to give the payload", f.Name())
	var raw []byte
	var from string
	switch {
	case strings.HasPrefix(data, "@"):
		from = data[1:]
		file, err := os.Open(from)
		if err != nil {
			return nil, usageErrorf(hint, "send: read the payload: %v", err)
		}
		defer file.Close()
		raw, err = io.ReadAll(io.LimitReader(file, maxSendPayload+1))
		if err != nil {
			return nil, failf("", "send: read the payload from %s: %v", from, err)
		}
	case data != "":
		from, raw = "--data", []byte(data)
	default:
		from = "stdin"
		var err error
		raw, err = io.ReadAll(io.LimitReader(e.stdin, maxSendPayload+1))
		if err != nil {
			return nil, failf("", "send: read the payload from stdin: %v", err)
		}
	}
	if len(raw) > maxSendPayload {
		return nil, usageErrorf("", "send: the payload in %s is larger than %d MiB", from, maxSendPayload>>20)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, usageErrorf(hint, "send: the payload in %s is empty; pass a JSON object with --data, --data @file or on stdin", from)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var payload map[string]any
	if err := dec.Decode(&payload); err != nil || payload == nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) || (err == nil && payload == nil) {
			return nil, usageErrorf(`wrap the value in an object, e.g. {"items": [...]}`, "send: the payload in %s must be a JSON object", from)
		}
		return nil, usageErrorf(hint, "send: the payload in %s is not valid JSON: %v", from, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, usageErrorf(hint, "send: the payload in %s has data after its JSON object", from)
	}
	return payload, nil
}

// runMessages handles "hookd messages".
func runMessages(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "messages", "messages APP [--event-type T ...] [--channel C] [--limit N]\n\nLists the application's messages, newest first."+clientHelp)
	var types stringList
	f.Var(&types, "event-type", "only messages of this event type; repeat for several")
	channel := f.String("channel", "", "only messages on this channel")
	limit := limitFlag(f, "messages")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	if err := checkLimit(f, *limit); err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	opts := &svix.MessageListOptions{}
	if len(types) > 0 {
		t := []string(types)
		opts.EventTypes = &t
	}
	if *channel != "" {
		opts.Channel = channel
	}
	fetch := func(it *string, n int32) (page[svix.MessageOut], error) {
		opts.Iterator, opts.Limit = it, &n
		l, err := c.sdk.Message.List(ctx, pos[0], opts)
		if err != nil {
			return page[svix.MessageOut]{}, err
		}
		return page[svix.MessageOut]{l.Data, l.Done, l.Iterator.Get()}, nil
	}
	return printList(ctx, c, "messages of "+pos[0], target{app: pos[0]}, *limit, fetch, []string{"ID", "EVENT TYPE", "EVENT ID", "CHANNELS", "TIMESTAMP"},
		func(m *svix.MessageOut) []string {
			return []string{m.Id, m.EventType, orDash(deref(m.EventId)), joinOr(m.Channels, "-"), formatTime(m.Timestamp)}
		})
}

// runAttempts handles "hookd attempts".
func runAttempts(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "attempts", "attempts APP (--msg MSG | --endpoint EP) [--limit N]\n\nLists delivery attempts, newest first: of one message (--msg), to one endpoint\n(--endpoint), or of one message to one endpoint (both)."+clientHelp)
	msg := f.String("msg", "", "the message's id or event id")
	ep := f.String("endpoint", "", "the endpoint's id or uid")
	limit := limitFlag(f, "attempts")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	if *msg == "" && *ep == "" {
		return usageErrorf(`e.g. hookd attempts acme --msg msg_2bQ1... (or --endpoint ep_...)`, "attempts: pass --msg, --endpoint or both")
	}
	if err := checkLimit(f, *limit); err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	opts := &svix.MessageAttemptListOptions{}
	fetch := func(it *string, n int32) (page[svix.MessageAttemptOut], error) {
		opts.Iterator, opts.Limit = it, &n
		var l *svix.ListResponseMessageAttemptOut
		var err error
		if *msg != "" {
			if *ep != "" {
				opts.EndpointId = ep
			}
			l, err = c.sdk.MessageAttempt.ListByMsg(ctx, pos[0], *msg, opts)
		} else {
			l, err = c.sdk.MessageAttempt.ListByEndpoint(ctx, pos[0], *ep, opts)
		}
		if err != nil {
			return page[svix.MessageAttemptOut]{}, err
		}
		return page[svix.MessageAttemptOut]{l.Data, l.Done, l.Iterator.Get()}, nil
	}
	return printList(ctx, c, "attempts", target{app: pos[0], msg: *msg, endpoint: *ep}, *limit, fetch, []string{"ID", "MESSAGE", "ENDPOINT", "STATUS", "CODE", "DURATION", "TRIGGER", "TIMESTAMP", "ERROR"},
		func(a *svix.MessageAttemptOut) []string {
			code, why := "-", ""
			if a.ResponseStatusCode != 0 {
				code = strconv.Itoa(int(a.ResponseStatusCode))
			} else {
				why = oneLine(a.Response, 60) // no response arrived: the response is why
			}
			return []string{a.Id, a.MsgId, a.EndpointId, attemptStatus(a.Status), code,
				strconv.FormatInt(a.ResponseDurationMs, 10) + "ms", attemptTrigger(int(a.TriggerType)), formatTime(a.Timestamp), why}
		})
}

// attemptStatus names Svix's MessageStatus numbers.
func attemptStatus(s svix.MessageStatus) string {
	return enumName(int(s), "success", "pending", "fail", "sending")
}

// attemptTrigger names Svix's MessageAttemptTriggerType numbers.
func attemptTrigger(t int) string {
	return enumName(t, "scheduled", "manual")
}

func enumName(n int, names ...string) string {
	if n >= 0 && n < len(names) {
		return names[n]
	}
	return strconv.Itoa(n)
}

// runResend handles "hookd resend".
func runResend(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "resend", "resend APP MSG EP\n\nSends the message MSG to the endpoint EP again, now, whatever happened before."+clientHelp)
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP", "MSG", "EP")
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	if err := c.sdk.MessageAttempt.ResendWithOptions(ctx, pos[0], pos[1], pos[2], once()); err != nil {
		return c.failAt(ctx, fmt.Sprintf("resend %s to %s", pos[1], pos[2]), target{app: pos[0], msg: pos[1], endpoint: pos[2]}, err)
	}
	if c.json {
		return c.printJSON(map[string]any{"msg": pos[1], "endpoint": pos[2], "resent": true})
	}
	fmt.Fprintf(e.stdout, "resending message %s to endpoint %s; \"hookd attempts %s --msg %s\" shows the outcome\n", pos[1], pos[2], pos[0], pos[1])
	return nil
}

// runRecover handles "hookd recover".
func runRecover(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "recover", "recover APP EP --since (2026-01-02T15:04:05Z | 1h)\n\nSends again every message that failed to reach the endpoint EP since a time:\nan RFC 3339 time, or a duration meaning that long ago (90m, 6h, 2d)."+clientHelp)
	since := f.String("since", "", "recover failures since this time or this long ago (required)")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP", "EP")
	if err != nil {
		return err
	}
	t, err := parseSince(*since, time.Now())
	if err != nil {
		return usageErrorf(`e.g. --since 2026-01-02T15:04:05Z or --since 6h`, "recover: %v", err)
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	out, err := c.sdk.Endpoint.RecoverWithOptions(ctx, pos[0], pos[1], &svix.RecoverIn{Since: t}, once())
	if err != nil {
		return c.failAt(ctx, "recover endpoint "+pos[1], target{app: pos[0], endpoint: pos[1]}, err)
	}
	if c.json {
		return c.printJSON(out)
	}
	fmt.Fprintf(e.stdout, "recovering the messages that failed to reach endpoint %s since %s: task %s, %s\n", pos[1], formatTime(t), out.Id, out.Status)
	return nil
}

// parseSince reads an RFC 3339 time, or a duration before now (Go's syntax, plus whole days
// "2d").
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("--since is required")
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		if t.After(now) {
			return time.Time{}, fmt.Errorf("--since %s is in the future", s)
		}
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 3650 {
			return time.Time{}, fmt.Errorf("--since %q is neither an RFC 3339 time nor a duration", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return time.Time{}, fmt.Errorf("--since %q is neither an RFC 3339 time nor a duration", s)
		}
	}
	if d <= 0 {
		return time.Time{}, fmt.Errorf("--since %q must be a positive duration", s)
	}
	return now.Add(-d).UTC().Truncate(time.Second), nil
}
