package migrations

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// ReleasedFile is where a store keeps its release manifest, beside its migrations.
const ReleasedFile = "migrations/released.txt"

// Released is one line of a store's release manifest: a migration file as a release shipped it.
type Released struct {
	Version  int
	Name     string
	Checksum string // hex SHA-256 of the file, as Checksum computes it
	Release  string // the first release that shipped it, e.g. v0.1.0
}

// ParseReleased reads a release manifest: one migration a line, "version name sha256 release",
// separated by spaces; blank lines and lines starting with '#' are skipped. Versions must rise
// from line to line, and each name must start with its version.
func ParseReleased(text string) ([]Released, error) {
	var out []Released
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: %q: want \"version name sha256 release\"", n, line)
		}
		v, err := strconv.Atoi(f[0])
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("line %d: version %q is not a positive number", n, f[0])
		}
		if num, _, _ := strings.Cut(f[1], "_"); num != f[0] {
			return nil, fmt.Errorf("line %d: name %s does not start with its version %s and '_'", n, f[1], f[0])
		}
		if len(f[2]) != 64 || strings.Trim(f[2], "0123456789abcdef") != "" {
			return nil, fmt.Errorf("line %d: checksum %q is not 64 lowercase hex digits", n, f[2])
		}
		if len(out) > 0 && v <= out[len(out)-1].Version {
			return nil, fmt.Errorf("line %d: version %d does not rise above %d", n, v, out[len(out)-1].Version)
		}
		out = append(out, Released{Version: v, Name: f[1], Checksum: f[2], Release: f[3]})
	}
	return out, sc.Err()
}

// CheckReleased returns every way known (a store's migrations, as Load returns them) breaks
// the release lock, joined, or nil: a released migration whose file is gone, renamed or
// changed, and a file not released whose version is not above every released one. A released
// migration never changes (databases record its checksum and refuse another text), and a new
// one is numbered above every released one (a database of the last release has them all).
func CheckReleased(known []Migration, released []Released) error {
	byVersion := make(map[int]Migration, len(known))
	for _, m := range known {
		byVersion[m.Version] = m
	}
	highest := 0
	for _, r := range released {
		highest = max(highest, r.Version)
	}
	var errs []error
	listed := make(map[int]bool, len(released))
	for _, r := range released {
		listed[r.Version] = true
		m, ok := byVersion[r.Version]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s, released in %s, has no file: a released migration stays", r.Name, r.Release))
		case m.Name != r.Name:
			errs = append(errs, fmt.Errorf("%s, released in %s, is now named %s: a released migration keeps its name", r.Name, r.Release, m.Name))
		case m.Checksum != r.Checksum:
			errs = append(errs, fmt.Errorf("%s, released in %s, changed (sha256 %s released, %s now): "+
				"a released migration never changes; undo the change and make it a new migration numbered above %d",
				r.Name, r.Release, r.Checksum, m.Checksum, highest))
		}
	}
	for _, m := range known {
		if !listed[m.Version] && m.Version <= highest {
			errs = append(errs, fmt.Errorf("%s is not released and its version is not above the released %d: "+
				"a database of that release would skip it; renumber it above %d", m.Name, highest, highest))
		}
	}
	return errors.Join(errs...)
}

// CheckReleasedFS loads the migrations of fsys (migrations/*.sql) and its release manifest
// (ReleasedFile), and checks them with CheckReleased.
func CheckReleasedFS(fsys fs.FS) error {
	known, err := Load(fsys)
	if err != nil {
		return err
	}
	text, err := fs.ReadFile(fsys, ReleasedFile)
	if err != nil {
		return err
	}
	released, err := ParseReleased(string(text))
	if err != nil {
		return fmt.Errorf("%s: %w", ReleasedFile, err)
	}
	return CheckReleased(known, released)
}
