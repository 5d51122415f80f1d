package main

import (
	"context"
	"fmt"

	"github.com/hookd/hookd/internal/buildinfo"
)

// runVersion prints the binary's release, the module version Go recorded (the tag, a
// pseudo-version, or "(devel)" for a checkout), the VCS revision (with "modified" when the work
// tree had changes) and the Go version: the release on its own first line, then one
// "name: value" line each.
func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version")
	if err := fs.parse(args); err != nil {
		return err
	}
	fmt.Fprint(e.stdout, versionText(buildinfo.Read()))
	return nil
}

func versionText(info buildinfo.Info) string {
	rev := info.Revision
	if info.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("hookd %s\nmodule: %s %s\nrevision: %s\ngo: %s\n", info.Version, buildinfo.ModulePath, info.Module, rev, info.GoVersion)
}
