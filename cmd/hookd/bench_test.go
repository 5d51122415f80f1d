package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestBenchSmall runs every benchmark at a tiny size on both targets, the library and the HTTP
// API, and checks that each delivery arrived once, verified, and that the JSON and the text carry
// the figures of both. It asserts no speed.
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
	if len(rep.Targets) != 2 || rep.Targets[0].Name != "library" || rep.Targets[1].Name != "api" {
		t.Fatalf("targets = %+v, want library then api", rep.Targets)
	}
	for _, tr := range rep.Targets {
		if tr.B1 == nil || tr.B2 == nil || tr.B3 == nil {
			t.Fatalf("%s: B1 %v, B2 %v, B3 %v; want all three", tr.Name, tr.B1, tr.B2, tr.B3)
		}
		for name, c := range map[string]benchCounts{
			"B1": tr.B1.Receiver, "B2 baseline": tr.B2.Baseline.Receiver,
			"B2 with hanging": tr.B2.WithHanging.Receiver, "B3": tr.B3.Receiver,
		} {
			if c.Delivered != c.Expected || c.Unverified != 0 || c.Duplicates != 0 {
				t.Errorf("%s %s: %+v, want every expected delivery verified, once", tr.Name, name, c)
			}
		}
		if got := tr.B1.Receiver.Expected; got != 40 {
			t.Errorf("%s B1 expected %d deliveries, want 20 messages × 2 endpoints = 40", tr.Name, got)
		}
		if tr.B1.RecordedDelivered != 40 {
			t.Errorf("%s B1: store records %d delivered, want 40", tr.Name, tr.B1.RecordedDelivered)
		}
		if got := tr.B2.WithHanging.Receiver; got.Expected != 10 || got.HangingRequests == 0 {
			t.Errorf("%s B2 with hanging: %+v, want 10 healthy deliveries and requests to the hanging endpoint", tr.Name, got)
		}
		if got := tr.B2.Baseline.Receiver.HangingRequests; got != 0 {
			t.Errorf("%s B2 baseline: %d requests to a hanging endpoint, want none", tr.Name, got)
		}
		if got := tr.B3.Receiver.Expected; got != 5 {
			t.Errorf("%s B3 expected %d deliveries, want 5", tr.Name, got)
		}
	}

	// The fields a script reads.
	var top struct {
		Targets []map[string]json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(out.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	var topKeys map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &topKeys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"command", "config", "machine", "targets", "problems"} {
		if _, ok := topKeys[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	want := map[string][]string{
		"b1": {"sendsPerSec", "sendP50Ms", "sendP99Ms", "deliveriesPerSec", "deliverSeconds", "targetDeliveriesPerSec", "deliveriesMet", "met", "receiver"},
		"b2": {"baseline", "withHanging", "ratio", "targetRatio", "met"},
		"b3": {"p50Ms", "p99Ms", "sendP50Ms", "targetP50Ms", "met", "receiver"},
	}
	for i, target := range top.Targets {
		name := rep.Targets[i].Name
		for _, k := range []string{"name", "description"} {
			if _, ok := target[k]; !ok {
				t.Errorf("JSON target %s lacks %q", name, k)
			}
		}
		for bench, fields := range want {
			var m map[string]any
			if err := json.Unmarshal(target[bench], &m); err != nil {
				t.Fatalf("%s %s: %v", name, bench, err)
			}
			for _, f := range fields {
				if _, ok := m[f]; !ok {
					t.Errorf("JSON %s %s lacks %q", name, bench, f)
				}
			}
			if bench != "b1" {
				continue
			}
			// Only the API has a sends/s target.
			_, hasTarget := m["targetSendsPerSec"]
			_, hasMet := m["sendsMet"]
			if wantSends := name == "api"; hasTarget != wantSends || hasMet != wantSends {
				t.Errorf("JSON %s b1: targetSendsPerSec %v, sendsMet %v; want both %v", name, hasTarget, hasMet, wantSends)
			}
		}
	}
	if got := rep.Targets[1].B1.TargetSendsPerSec; got != b1TargetSendsPerSecAPI {
		t.Errorf("api B1 targetSendsPerSec = %g, want %g", got, b1TargetSendsPerSecAPI)
	}

	// The text shows both targets side by side.
	text := rep.text()
	for _, s := range []string{"figure  ", "library", "api", "api ≥ 1,000", "≥ 1,500", "≤ 1.2×", "p50 ≤ 20.0 ms", "every delivery arrived once, verified"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
}

// TestBenchTargetAPI runs B3 through the API alone: the target works without the library's runs.
func TestBenchTargetAPI(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	args := []string{"--target", "api", "--only", "B3", "--json"}
	err := benchCommand(context.Background(), e, args, func(o *benchOptions) { o.b3Sends, o.stall = 3, 10*time.Second })
	if err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode %s: %v", out.String(), err)
	}
	if len(rep.Targets) != 1 || rep.Targets[0].Name != "api" {
		t.Fatalf("targets = %+v, want api alone", rep.Targets)
	}
	tr := rep.Targets[0]
	if tr.B1 != nil || tr.B2 != nil || tr.B3 == nil {
		t.Fatalf("api: B1 %v, B2 %v, B3 %v; want B3 alone", tr.B1, tr.B2, tr.B3)
	}
	if c := tr.B3.Receiver; c.Expected != 3 || c.Delivered != 3 || c.Unverified != 0 || c.Duplicates != 0 {
		t.Errorf("api B3: %+v, want 3 deliveries verified, once", c)
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
		{"--target", "sdk"},
		{"--target", ","},
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
