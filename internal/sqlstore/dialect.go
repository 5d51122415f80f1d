// Package sqlstore is what hookd's SQL stores (sqlite and postgres) share and that does not
// depend on a dialect: the list-query builder, row scanning over a Scanner that *sql.Row,
// *sql.Rows, pgx.Row and pgx.Rows all satisfy, and the fold of a batch of attempt records into
// the deliveries' and endpoints' new state. Statements, connections and error classification
// stay in each store; what differs between the two SQL dialects reaches this package as a
// Dialect.
package sqlstore

import "time"

// Dialect is how a store's SQL and column types differ where this package builds statements or
// scans rows.
type Dialect struct {
	// Numbered writes a list query's placeholders $1, $2 ... (PostgreSQL); false keeps ? (SQLite).
	Numbered bool
	// LeadingFilter writes every equality filter of a list after the first as +col, which SQLite
	// does not use an index for: without statistics (no ANALYZE) SQLite would otherwise pick an
	// index by itself, such as the application's for the attempts of one endpoint, and scan every
	// attempt of the application to find a page.
	LeadingFilter bool
	// MergedUnion writes a list's branches as one aliased subquery of parenthesised selects even
	// without a limit, the form in which PostgreSQL merges the branches' index ranges (Merge
	// Append) and stops at the page's end. False writes SQLite's form, each branch a subquery.
	MergedUnion bool
	// Time is a time as a statement argument.
	Time func(time.Time) any
	// ScanTime returns a scan destination that sets *t from a NOT NULL time column, in UTC.
	ScanTime func(t *time.Time) any
	// ScanNullTime returns a scan destination that sets *t from a nullable time column: nil for
	// NULL, else the time in UTC.
	ScanNullTime func(t **time.Time) any
}
