package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	// A test binary records no VCS revision, as a -buildvcs=false build does.
	want := "hookd (devel)\nrevision: unknown\ngo: " + runtime.Version() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := run(t, "", args...)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		if r.stdout != want {
			t.Fatalf("%v: stdout %q, want %q", args, r.stdout, want)
		}
	}
	if r := run(t, "", "version", "extra"); r.code != exitUsage || !strings.Contains(r.stderr, `unexpected argument "extra"`) {
		t.Fatalf("version extra: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestVersionText(t *testing.T) {
	t.Parallel()
	got := versionText(buildinfo.Info{Version: "v0.3.0", Revision: "abcdef0123456789", Modified: true, GoVersion: "go1.26.0"})
	want := "hookd v0.3.0\nrevision: abcdef0123456789 (modified)\ngo: go1.26.0\n"
	if got != want {
		t.Fatalf("versionText = %q, want %q", got, want)
	}
}

func TestUsageListsVersion(t *testing.T) {
	t.Parallel()
	if r := run(t, "", "--help"); !strings.Contains(r.stdout, "\n  version ") {
		t.Fatalf("usage lacks version:\n%s", r.stdout)
	}
}
