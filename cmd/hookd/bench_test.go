package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestBenchSmall runs every benchmark at a tiny size and checks that each delivery arrived once,
// verified, and that the JSON carries the figures. It asserts no speed.
func TestBenchSmall(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	args := []string{"--messages", "20", "--endpoints", "2", "--producers", "2", "--json"}
	err := benchCommand(context.Background(), e, args, func(o *benchOptions) {
		o.b2Messages, o.b2Timeout, o.b3Sends, o.stall = 10, 200*time.Millisecond, 5, 10*time.Second
	})
	if err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("--json wrote to stderr: %q", errb.String())
	}

	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode %s: %v", out.String(), err)
	}
	if len(rep.Problems) != 0 {
		t.Errorf("problems: %v", rep.Problems)
	}
	if rep.Command != "hookd bench "+strings.Join(args, " ") {
		t.Errorf("command = %q", rep.Command)
	}
	for name, c := range map[string]benchCounts{
		"B1": rep.B1.Receiver, "B2 baseline": rep.B2.Baseline.Receiver,
		"B2 with hanging": rep.B2.WithHanging.Receiver, "B3": rep.B3.Receiver,
	} {
		if c.Delivered != c.Expected || c.Unverified != 0 || c.Duplicates != 0 {
			t.Errorf("%s: %+v, want every expected delivery verified, once", name, c)
		}
	}
	if got := rep.B1.Receiver.Expected; got != 40 {
		t.Errorf("B1 expected %d deliveries, want 20 messages × 2 endpoints = 40", got)
	}
	if rep.B1.RecordedDelivered != 40 {
		t.Errorf("B1: store records %d delivered, want 40", rep.B1.RecordedDelivered)
	}
	if got := rep.B2.WithHanging.Receiver; got.Expected != 10 || got.HangingRequests == 0 {
		t.Errorf("B2 with hanging: %+v, want 10 healthy deliveries and requests to the hanging endpoint", got)
	}
	if got := rep.B2.Baseline.Receiver.HangingRequests; got != 0 {
		t.Errorf("B2 baseline: %d requests to a hanging endpoint, want none", got)
	}

	// The fields a script reads.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"b1": {"sendsPerSec", "sendP50Ms", "sendP99Ms", "deliveriesPerSec", "deliverSeconds", "targetDeliveriesPerSec", "met", "receiver"},
		"b2": {"baseline", "withHanging", "ratio", "targetRatio", "met"},
		"b3": {"p50Ms", "p99Ms", "targetP50Ms", "met", "receiver"},
	}
	for _, k := range []string{"command", "target", "config", "machine", "problems"} {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for bench, fields := range want {
		var m map[string]any
		if err := json.Unmarshal(top[bench], &m); err != nil {
			t.Fatalf("%s: %v", bench, err)
		}
		for _, f := range fields {
			if _, ok := m[f]; !ok {
				t.Errorf("JSON %s lacks %q", bench, f)
			}
		}
	}
}

// TestBenchUsage checks that bad flags are usage errors with a hint.
func TestBenchUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--messages", "0"},
		{"--endpoints", "-1"},
		{"--producers", "1001"},
		{"--only", "B4"},
		{"--only", ","},
		{"--only", "B2", "--endpoints", "1"},
		{"--messages", "x"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"bench"}, args...), strings.NewReader(""), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "hint:") {
			t.Errorf("bench %v: exit %d, stderr %q; want exit %d with a hint", args, code, errb.String(), exitUsage)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {99, 10}, {100, 10}, {10, 1}, {0, 1}} {
		if got := percentile(ds, tc.p); got != tc.want {
			t.Errorf("percentile(%g) = %d, want %d", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of nothing = %d, want 0", got)
	}
}
