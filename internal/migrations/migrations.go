// Package migrations holds what hookd's SQL stores share about their schema changes: the
// embedded files (NNNN_what.sql under migrations/), the decision of what to apply to a database
// or why to refuse it (Decide), each migration's state for an operator (Report), and the check
// that released files never change (CheckReleased).
//
// A database records in hookd_migrations every migration applied to it: version, name, the
// SHA-256 of the text applied, and when. A runner applies, in version order and in one
// transaction, every embedded migration whose version is not recorded, below the highest
// recorded one too (two migrations once landed in a different order than their numbers). It
// refuses, with an error wrapping hookd.ErrIncompatibleSchema that names the migration and the
// fix, a database that records a version this build does not know (a later release wrote it),
// or a migration whose name or checksum differs from this build's, or one whose missing
// migration fails to apply. Databases migrated before checksums were recorded hold rows with
// none; they stand for the versions of that time (the store's unchecked bound), whose text this
// build cannot know, and later repair migrations bring every such variant to one schema.
package migrations

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one schema change.
type Migration struct {
	Version int
	Name    string // the file's name without .sql
	SQL     string
	// Checksum is the hex SHA-256 of the file's bytes.
	Checksum string
}

// Load returns the migrations/*.sql files of fsys in version order. A name without a positive
// version and '_', or two files with one version, is an error.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version and '_'", base)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: version, Name: strings.TrimSuffix(base, ".sql"), SQL: string(body), Checksum: Checksum(body)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].Name, out[i].Name, out[i].Version)
		}
	}
	return out, nil
}

// Checksum is the hex SHA-256 of a migration's text, as hookd_migrations records it.
func Checksum(text []byte) string {
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}
