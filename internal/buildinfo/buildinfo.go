// Package buildinfo reads what the Go toolchain stamped into the running binary: the module's
// version, the VCS revision it was built from, and the Go version. `hookd version` prints it and
// /metrics exposes it as hookd_build_info.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Placeholders for what a build did not record: "go build" in a checkout gives "(devel)" as the
// version, and -buildvcs=false (or a build outside a repository) records no revision.
const (
	DevelVersion    = "(devel)"
	UnknownRevision = "unknown"
)

// Info is the running binary's build.
type Info struct {
	Version   string // module version, such as v1.2.3; DevelVersion when not built from a tagged module
	Revision  string // VCS revision; UnknownRevision when none was recorded
	Modified  bool   // the work tree had changes the revision does not hold
	GoVersion string // the toolchain, such as go1.26.0
}

// Read returns the running binary's build.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return From(bi)
}

// From extracts Info from bi; a nil bi (a binary built without module support) gives the
// placeholders and the running Go version.
func From(bi *debug.BuildInfo) Info {
	info := Info{Version: DevelVersion, Revision: UnknownRevision, GoVersion: runtime.Version()}
	if bi == nil {
		return info
	}
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
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
	return info
}
