package main

import (
	"context"
	"fmt"

	"github.com/hookd/hookd/internal/buildinfo"
)

// runVersion prints the binary's module version, VCS revision (with "modified" when the work tree
// had changes) and Go version, one "name: value" line each.
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
	return fmt.Sprintf("hookd %s\nrevision: %s\ngo: %s\n", info.Version, rev, info.GoVersion)
}
