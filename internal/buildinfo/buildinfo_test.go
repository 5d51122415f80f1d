package buildinfo_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

func TestFrom(t *testing.T) {
	t.Parallel()
	const rel = buildinfo.Release
	main := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: buildinfo.ModulePath, Version: version}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "abcdef0123456789abcdef0123456789abcdef01"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want buildinfo.Info
	}{
		{"no build info", nil,
			buildinfo.Info{Version: rel, Module: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}},
		{"checkout built with -buildvcs=false", main("(devel)"),
			buildinfo.Info{Version: rel, Module: "(devel)", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"empty main version", main(""),
			buildinfo.Info{Version: rel, Module: "(devel)", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"go install of a tag", main("v0.3.0"),
			buildinfo.Info{Version: "v0.3.0", Module: "v0.3.0", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"go install of a pre-release tag", main("v0.3.0-rc.1"),
			buildinfo.Info{Version: "v0.3.0-rc.1", Module: "v0.3.0-rc.1", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"go install of a commit", main("v0.1.1-0.20261210093000-abcdef012345"),
			buildinfo.Info{Version: rel, Module: "v0.1.1-0.20261210093000-abcdef012345", Revision: "abcdef012345", GoVersion: "go1.26.0"}},
		{"go install of a commit before the first tag", main("v0.0.0-20261201000000-abcdef012345"),
			buildinfo.Info{Version: rel, Module: "v0.0.0-20261201000000-abcdef012345", Revision: "abcdef012345", GoVersion: "go1.26.0"}},
		{"clean checkout at the tag", main("v0.3.0", rev, clean),
			buildinfo.Info{Version: "v0.3.0", Module: "v0.3.0", Revision: rev.Value, GoVersion: "go1.26.0"}},
		{"checkout at the tag with changes", main("v0.3.0+dirty", rev, dirty),
			buildinfo.Info{Version: rel, Module: "v0.3.0+dirty", Revision: rev.Value, Modified: true, GoVersion: "go1.26.0"}},
		{"checkout between tags with changes", main("v0.3.1-0.20261201000000-abcdef012345+dirty", rev, dirty),
			buildinfo.Info{Version: rel, Module: "v0.3.1-0.20261201000000-abcdef012345+dirty", Revision: rev.Value, Modified: true, GoVersion: "go1.26.0"}},
		{"clean checkout, older toolchain", main("(devel)", rev, clean),
			buildinfo.Info{Version: rel, Module: "(devel)", Revision: rev.Value, GoVersion: "go1.26.0"}},
		{"library of an app, at a tag", &debug.BuildInfo{GoVersion: "go1.26.0",
			Main:     debug.Module{Path: "example.com/app", Version: "v2.0.0"},
			Deps:     []*debug.Module{{Path: "example.com/other", Version: "v9.9.9"}, {Path: buildinfo.ModulePath, Version: "v0.2.0"}},
			Settings: []debug.BuildSetting{rev, dirty}},
			buildinfo.Info{Version: "v0.2.0", Module: "v0.2.0", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"library of an app, replaced by a directory", &debug.BuildInfo{GoVersion: "go1.26.0",
			Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps: []*debug.Module{{Path: buildinfo.ModulePath, Version: "v0.2.0", Replace: &debug.Module{Path: "../hookd"}}}},
			buildinfo.Info{Version: rel, Module: "(devel)", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"another program without hookd", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "example.com/app", Version: "v2.0.0"}},
			buildinfo.Info{Version: rel, Module: "(devel)", Revision: "unknown", GoVersion: "go1.26.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := buildinfo.From(tt.bi)
			if got != tt.want {
				t.Fatalf("From = %+v, want %+v", got, tt.want)
			}
			if tagged := got.Version == got.Module; got.Tagged() != tagged {
				t.Fatalf("Tagged = %v for %+v", got.Tagged(), got)
			}
		})
	}
}

func TestUserAgent(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]string{
		"v0.1.0":      "hookd/0.1.0",
		"v1.2.3-rc.1": "hookd/1.2.3-rc.1",
	} {
		if got := (buildinfo.Info{Version: version}).UserAgent(); got != want {
			t.Errorf("UserAgent of %s = %q, want %q", version, got, want)
		}
	}
}

// The test binary is built from this module's source: it says the release, as a build from a
// checkout does.
func TestReadInTestBinary(t *testing.T) {
	t.Parallel()
	info := buildinfo.Read()
	if info.Version != buildinfo.Release || info.Tagged() {
		t.Fatalf("Read = %+v, want the release %s, not tagged", info, buildinfo.Release)
	}
}
