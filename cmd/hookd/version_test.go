package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	// A test binary is built from this source and records no VCS revision, as a -buildvcs=false
	// build of a checkout does: it says the release.
	want := "hookd " + buildinfo.Release + "\nmodule: github.com/hookd/hookd (devel)\nrevision: unknown\ngo: " + runtime.Version() + "\n"
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
	for _, tc := range []struct {
		info buildinfo.Info
		want string
	}{
		{buildinfo.Info{Version: "v0.3.0", Module: "v0.3.0", Revision: "unknown", GoVersion: "go1.26.0"},
			"hookd v0.3.0\nmodule: github.com/hookd/hookd v0.3.0\nrevision: unknown\ngo: go1.26.0\n"},
		{buildinfo.Info{Version: "v0.3.0", Module: "v0.3.1-0.20261201000000-abcdef012345+dirty", Revision: "abcdef0123456789", Modified: true, GoVersion: "go1.26.0"},
			"hookd v0.3.0\nmodule: github.com/hookd/hookd v0.3.1-0.20261201000000-abcdef012345+dirty\nrevision: abcdef0123456789 (modified)\ngo: go1.26.0\n"},
	} {
		if got := versionText(tc.info); got != tc.want {
			t.Errorf("versionText = %q, want %q", got, tc.want)
		}
	}
}

func TestUsageListsVersion(t *testing.T) {
	t.Parallel()
	if r := run(t, "", "--help"); !strings.Contains(r.stdout, "\n  version ") {
		t.Fatalf("usage lacks version:\n%s", r.stdout)
	}
}
