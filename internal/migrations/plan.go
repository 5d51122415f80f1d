package migrations

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hookd/hookd"
)

// Record is one row of hookd_migrations: a migration the database records as applied.
type Record struct {
	Version int
	Name    string
	// Checksum is the hex SHA-256 of the text applied; "" in a row written before checksums
	// were recorded.
	Checksum  string
	AppliedAt time.Time
}

// State is where one migration stands in one database.
type State string

const (
	// Applied: the database records the migration, and this build knows it.
	Applied State = "applied"
	// Pending: this build knows the migration and the database does not record it; the next
	// runner applies it.
	Pending State = "pending"
	// Unknown: the database records a migration this build does not know (a later release
	// applied it).
	Unknown State = "unknown"
)

// Status is one migration's state in one database, for an operator.
type Status struct {
	Version int
	// Name is this build's name of the migration; for an Unknown one, the database's.
	Name  string
	State State
	// AppliedAt is when the database records the migration applied; zero for a Pending one.
	AppliedAt time.Time
	// Unchecked is true for a row written before checksums were recorded.
	Unchecked bool
	// Missing is true for a Pending migration below the highest recorded version: one the
	// database skipped, which the next runner applies among the others.
	Missing bool
	// Problem, when not nil, is why this migration makes the database refused: a *SchemaError.
	Problem error
}

// Report returns the state of every migration this build knows (known, in version order, as
// Load returns them) or the database records (recorded, in any order), in version order. A row
// without a checksum passes for a version up to unchecked: those applied before checksums were
// recorded, whose text this build cannot know.
func Report(known []Migration, recorded []Record, unchecked int) []Status {
	byVersion := make(map[int]Migration, len(known))
	for _, m := range known {
		byVersion[m.Version] = m
	}
	highest := 0
	seen := make(map[int]bool, len(recorded))
	var out []Status
	for _, r := range recorded {
		highest = max(highest, r.Version)
		seen[r.Version] = true
		s := Status{Version: r.Version, Name: r.Name, State: Applied, AppliedAt: r.AppliedAt, Unchecked: r.Checksum == ""}
		m, ok := byVersion[r.Version]
		if ok {
			s.Name = m.Name
		} else {
			s.State = Unknown
		}
		if p := check(r, m, ok, unchecked); p != nil {
			s.Problem = p
		}
		out = append(out, s)
	}
	for _, m := range known {
		if !seen[m.Version] {
			out = append(out, Status{Version: m.Version, Name: m.Name, State: Pending, Missing: m.Version < highest})
		}
	}
	slices.SortFunc(out, func(a, b Status) int { return cmp.Compare(a.Version, b.Version) })
	return out
}

// Fixes, in the words of SchemaError.Fix.
const (
	fixLaterRelease = "run that release or later, or restore the backup taken before the upgrade"
	fixOtherBuild   = "another build of hookd (a development build, or one whose migration changed after its release) " +
		"migrated this database: run that build, or restore the backup taken before it ran"
	fixFailed = "nothing was applied and the database is as it was: run the release that last opened it, " +
		"or restore the backup taken before the upgrade, and report this error"
)

// check returns why the row r makes the database refused, or nil; m is this build's migration
// of r's version, when known.
func check(r Record, m Migration, known bool, unchecked int) error {
	switch {
	case !known:
		return &SchemaError{Version: r.Version, Name: r.Name, Fix: fixLaterRelease,
			Problem: "the database records it and this build of hookd does not know it: a later release applied it"}
	case r.Name != m.Name:
		return &SchemaError{Version: r.Version, Name: m.Name, Fix: fixOtherBuild,
			Problem: fmt.Sprintf("the database records version %d as %s", r.Version, r.Name)}
	case r.Checksum == "" && r.Version > unchecked:
		return &SchemaError{Version: r.Version, Name: m.Name, Fix: fixOtherBuild,
			Problem: "the database records it without a checksum, which every runner that knows it records"}
	case r.Checksum != "" && r.Checksum != m.Checksum:
		return &SchemaError{Version: r.Version, Name: m.Name, Fix: fixOtherBuild,
			Problem: fmt.Sprintf("the database records it applied from another text (sha256 %.12s…) than this build's (%.12s…)", r.Checksum, m.Checksum)}
	}
	return nil
}

// Plan is what a runner does to one database: apply Pending, in order, in one transaction.
type Plan struct {
	// Pending are the migrations the database does not record, in version order.
	Pending []Migration
	// highest is the highest version the database records (0: none).
	highest int
}

// Decide compares the rows a database records with the migrations of this build, as Report
// does, and returns what to apply, or a *SchemaError wrapping hookd.ErrIncompatibleSchema that
// names the first migration, in version order, for which the database must not be used.
func Decide(known []Migration, recorded []Record, unchecked int) (Plan, error) {
	byVersion := make(map[int]Migration, len(known))
	for _, m := range known {
		byVersion[m.Version] = m
	}
	var p Plan
	for _, s := range Report(known, recorded, unchecked) {
		if s.Problem != nil {
			return Plan{}, s.Problem
		}
		if s.State == Pending {
			p.Pending = append(p.Pending, byVersion[s.Version])
		} else {
			p.highest = s.Version
		}
	}
	return p, nil
}

// Run applies p's migrations in order with apply, which runs one migration's SQL and records it
// in the runner's transaction, and stops at the first error. A migration missing below a
// recorded one that fails gives a *SchemaError (the runner rolls back and refuses the
// database); any other failure comes back wrapped with the migration's name.
func (p Plan) Run(apply func(Migration) error) error {
	for _, m := range p.Pending {
		if err := apply(m); err != nil {
			if m.Version < p.highest {
				return &SchemaError{Version: m.Version, Name: m.Name, Fix: fixFailed, Err: err,
					Problem: fmt.Sprintf("it is missing below recorded migration %d and failed to apply", p.highest)}
			}
			return fmt.Errorf("apply migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// SchemaError says why a database is refused: the migration, what is wrong, and the fix. It
// wraps hookd.ErrIncompatibleSchema and, for a migration that failed to apply, the database's
// error.
type SchemaError struct {
	Version int
	Name    string
	Problem string // what is wrong, e.g. "the database records it and this build of hookd does not know it"
	Fix     string // what the operator does about it
	Err     error  // the database's error, for a migration that failed to apply; nil otherwise
}

func (e *SchemaError) Error() string {
	msg := fmt.Sprintf("migration %d (%s): %s", e.Version, e.Name, e.Problem)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "; " + e.Fix
}

// Unwrap returns hookd.ErrIncompatibleSchema, and the database's error when there is one.
func (e *SchemaError) Unwrap() []error {
	if e.Err != nil {
		return []error{hookd.ErrIncompatibleSchema, e.Err}
	}
	return []error{hookd.ErrIncompatibleSchema}
}
