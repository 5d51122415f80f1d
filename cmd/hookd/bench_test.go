package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchCommand runs "hookd bench" at a tiny size through the command line: --json prints the
// report on stdout and nothing on stderr, the text prints its table, and both exit 0.
func TestBenchCommand(t *testing.T) {
	args := []string{"bench", "--target", "library", "--only", "B1", "--messages", "5", "--endpoints", "1", "--producers", "1"}
	var out, errb bytes.Buffer
	if code := Run(context.Background(), append(args, "--json"), strings.NewReader(""), &out, &errb); code != exitOK {
		t.Fatalf("bench --json: exit %d, stderr %q", code, errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("--json wrote to stderr: %q", errb.String())
	}
	var rep struct {
		Command  string   `json:"command"`
		Problems []string `json:"problems"`
		Targets  []struct {
			Name string          `json:"name"`
			B1   json.RawMessage `json:"b1"`
			B3   json.RawMessage `json:"b3"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode %s: %v", out.String(), err)
	}
	if want := "hookd " + strings.Join(args, " ") + " --json"; rep.Command != want {
		t.Errorf("command = %q, want %q", rep.Command, want)
	}
	if len(rep.Problems) != 0 || len(rep.Targets) != 1 || rep.Targets[0].Name != "library" || rep.Targets[0].B1 == nil || rep.Targets[0].B3 != nil {
		t.Errorf("report = %s, want B1 alone on library, without problems", out.String())
	}

	out.Reset()
	errb.Reset()
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &errb); code != exitOK {
		t.Fatalf("bench: exit %d, stderr %q", code, errb.String())
	}
	for _, s := range []string{"figure  ", "library", "≥ 1,500", "every delivery arrived once, verified"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, out.String())
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
		{"--only", "B5"},
		{"--b4-messages", "0"},
		{"--only", ","},
		{"--only", "B2", "--endpoints", "1"},
		{"--target", "sdk"},
		{"--target", ","},
		{"--target", "postgres"},
		{"--target", "postgres+redis", "--db", "postgres://postgres@127.0.0.1:5432/postgres"},
		{"--target", "fleet"},
		{"--target", "fleet", "--db", "postgres://postgres@127.0.0.1:5432/postgres", "--fleet-workers", "0"},
		{"--queue", "redis://127.0.0.1:6379/0"},
		{"--db", "mysql://root@127.0.0.1/hookd"},
		{"--db", "postgres://postgres@127.0.0.1:5432/postgres", "--queue", "http://127.0.0.1:6379"},
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
