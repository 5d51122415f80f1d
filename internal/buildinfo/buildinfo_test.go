package buildinfo_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

func TestFrom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want buildinfo.Info
	}{
		{"no build info", nil, buildinfo.Info{Version: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}},
		{"checkout built with -buildvcs=false", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			buildinfo.Info{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"empty main version", &debug.BuildInfo{GoVersion: "go1.26.0"},
			buildinfo.Info{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.0"}},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.3.0"}},
			buildinfo.Info{Version: "v0.3.0", Revision: "unknown", GoVersion: "go1.26.1"}},
		{"checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.1-0.20261201000000-abcdef012345+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abcdef0123456789"}, {Key: "vcs.modified", Value: "true"}}},
			buildinfo.Info{Version: "v0.3.1-0.20261201000000-abcdef012345+dirty", Revision: "abcdef0123456789", Modified: true, GoVersion: "go1.26.0"}},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abcdef0123456789"}, {Key: "vcs.modified", Value: "false"}}},
			buildinfo.Info{Version: "(devel)", Revision: "abcdef0123456789", GoVersion: "go1.26.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := buildinfo.From(tt.bi); got != tt.want {
				t.Fatalf("From = %+v, want %+v", got, tt.want)
			}
		})
	}
}
