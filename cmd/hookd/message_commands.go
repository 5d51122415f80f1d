package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// maxSendPayload bounds what "hookd send" reads; the server enforces its own, smaller limit.
const maxSendPayload = 16 << 20

const sendUsage = `send APP --event-type T [--event-id ID] [--channel C ...] [--data JSON | --data @file] < payload

Sends a message to the application APP (its id or uid): hookd signs it and
delivers it to every endpoint subscribed to its event type and channels.
The payload is a JSON object: --data '{"id":"in_1"}', --data @payload.json,
or, without --data, read from stdin.`

// runSend handles "hookd send".
func runSend(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "send", sendUsage+clientHelp)
	eventType := f.String("event-type", "", "the message's event type, e.g. invoice.paid (required)")
	eventID := f.String("event-id", "", "your unique id for the event; a second send with it is rejected (optional)")
	var channels stringList
	f.Var(&channels, "channel", "a channel the message is sent on; repeat for several (optional)")
	data := f.String("data", "", "the JSON payload, or @file to read it from a file (default: stdin)")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	if *eventType == "" {
		return usageErrorf(`e.g. hookd send acme --event-type invoice.paid --data '{"id":"in_1"}'`, "send: --event-type is required")
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
		return c.fail("send to "+pos[0], err)
	}
	if c.json {
		return c.printJSON(msg)
	}
	c.printFields(
		[2]string{"id", msg.Id},
		[2]string{"event type", msg.EventType},
		[2]string{"event id", orDash(deref(msg.EventId))},
		[2]string{"channels", joinOr(msg.Channels, "-")},
		[2]string{"timestamp", formatTime(msg.Timestamp)},
	)
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
	return printList(c, "messages of "+pos[0], *limit, fetch, []string{"ID", "EVENT TYPE", "EVENT ID", "CHANNELS", "TIMESTAMP"},
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
	return printList(c, "attempts", *limit, fetch, []string{"ID", "MESSAGE", "ENDPOINT", "STATUS", "CODE", "DURATION", "TRIGGER", "TIMESTAMP", "ERROR"},
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
		return c.fail(fmt.Sprintf("resend %s to %s", pos[1], pos[2]), err)
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
		return c.fail("recover endpoint "+pos[1], err)
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
