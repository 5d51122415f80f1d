// Package buildinfo says which hookd the running binary is: the release, the VCS revision it was
// built from, and the Go version. `hookd version` prints it, /metrics exposes it as
// hookd_build_info, and every delivery's User-Agent carries the release.
//
// The release comes from one of two places. A binary built from a published, tagged module
// (`go install github.com/hookd/hookd/cmd/hookd@v0.1.0`, or an app that requires hookd v0.1.0)
// carries the tag the Go toolchain recorded. Any other build (a checkout, a pseudo-version, a
// replaced module) says [Release], the release this source is, with its revision when the
// build recorded one.
package buildinfo

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Release is the release this source is. Each release changes it, and CHANGELOG.md's newest
// release heading names the same version (a test holds them together).
const Release = "v0.1.0"

// ModulePath is hookd's module path: the main module of the hookd binary, a dependency of an
// app that embeds the library.
const ModulePath = "github.com/hookd/hookd"

// UnknownRevision is the revision of a build that recorded none: -buildvcs=false, a build
// outside a repository, or a module downloaded at a tag.
const UnknownRevision = "unknown"

// Info is the running binary's build.
type Info struct {
	Version   string // the release, such as v0.1.0: the module's tag when built from one, else Release
	Module    string // the module version Go recorded: the tag, a pseudo-version, or "(devel)" in a checkout
	Revision  string // VCS revision; UnknownRevision when none was recorded
	Modified  bool   // the work tree had changes the revision does not hold
	GoVersion string // the toolchain, such as go1.26.0
}

// Tagged reports whether the binary was built from the published module at the tag Version
// names, rather than from a checkout or a commit between releases.
func (i Info) Tagged() bool { return i.Module == i.Version }

// UserAgent is the User-Agent of deliveries: "hookd/" and the version without its "v", as
// Svix's server sends "Svix-Webhooks/1.44.0". Receivers that match the prefix "hookd/" keep
// matching across releases.
func (i Info) UserAgent() string { return "hookd/" + strings.TrimPrefix(i.Version, "v") }

var read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return From(bi)
})

// Read returns the running binary's build. It is read once and then kept.
func Read() Info { return read() }

// From extracts Info from bi; a nil bi (a binary built without module support) gives Release,
// no revision and the running Go version.
func From(bi *debug.BuildInfo) Info {
	info := Info{Version: Release, Module: "(devel)", Revision: UnknownRevision, GoVersion: runtime.Version()}
	if bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	mod, main := hookdModule(bi)
	if mod == nil {
		return info
	}
	if mod.Version != "" {
		info.Module = mod.Version
	}
	if isTag(info.Module) {
		info.Version = info.Module
	}
	if main { // the VCS settings describe the main module only
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if s.Value != "" {
					info.Revision = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	// A pseudo-version names its commit, and "+dirty" a work tree with changes: what a build
	// of a commit records when the VCS settings are absent.
	if m := pseudoVersion.FindStringSubmatch(info.Module); m != nil && info.Revision == UnknownRevision {
		info.Revision = m[1]
	}
	if strings.HasSuffix(info.Module, "+dirty") {
		info.Modified = true
	}
	return info
}

// hookdModule finds hookd's module in bi: the main module, or a dependency (through its
// replacement, if any) when hookd is a library of another program.
func hookdModule(bi *debug.BuildInfo) (mod *debug.Module, main bool) {
	if bi.Main.Path == ModulePath {
		return &bi.Main, true
	}
	for _, d := range bi.Deps {
		if d.Path != ModulePath {
			continue
		}
		if d.Replace != nil {
			return d.Replace, false
		}
		return d, false
	}
	return nil, false
}

// semverTag matches a release or pre-release tag (v1.2.3, v1.2.3-rc.1), without build metadata.
var semverTag = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// pseudoVersion matches the tail of a pseudo-version (v0.0.0-20261201000000-abcdef012345,
// v0.1.1-0.20261201000000-abcdef012345+dirty) and captures its commit.
var pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-([0-9a-f]{12})(\+dirty)?$`)

// isTag reports whether v is a version a tag gives, not a pseudo-version or a build's "+dirty".
func isTag(v string) bool {
	return semverTag.MatchString(v) && !pseudoVersion.MatchString(v)
}
