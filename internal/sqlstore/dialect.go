// Package sqlstore is what hookd's SQL stores (sqlite and postgres) share and that does not
// depend on a dialect: the list-query builder, row scanning over a Scanner that *sql.Row,
// *sql.Rows, pgx.Row and pgx.Rows all satisfy, and the fold of a batch of attempt records into
// the deliveries' and endpoints' new state. Statements, connections and error classification
// stay in each store; what differs between the two SQL dialects reaches this package as a
// Dialect.
package sqlstore

import (
	"context"
	"time"
)

// Dialect is how a store's SQL and column types differ where this package builds statements or
// scans rows.
type Dialect struct {
	// Numbered writes a list query's placeholders $1, $2 ... (PostgreSQL); false keeps ? (SQLite).
	Numbered bool
	// LeadingFilter, when set, rewrites every equality filter of a list after the first (the most
	// selective, see List.Equal) to a form no index is used for, so that the first one's index
	// leads alone. SQLite writes +col: without statistics (no ANALYZE) it would otherwise pick an
	// index by itself, such as the application's for the attempts of one endpoint, and scan every
	// attempt of the application to find a page. PostgreSQL sets none: a rewritten column has no
	// statistics there, and its estimate of one matching row made plans that sort every row of
	// the leading index's range.
	LeadingFilter func(col string) string
	// MergedUnion writes a list's branches as one aliased subquery of parenthesised selects even
	// without a limit, the form in which PostgreSQL merges the branches' index ranges (Merge
	// Append) and stops at the page's end. False writes SQLite's form, each branch a subquery.
	MergedUnion bool
	// StatusBranches lists an endpoint's or an application's deliveries of any status as one
	// branch a status (see List.AnyOf), merged in id order: PostgreSQL indexes them in partial
	// indexes by status, so no one index range holds them all.
	StatusBranches bool
	// InList returns the condition that col is one of a list of strings bound as one argument
	// (see ListArg): one parameter however many strings.
	InList func(col string) string
	// ListArg is strings as the one argument of an InList condition.
	ListArg func([]string) any
	// Not returns the condition that the boolean column col is false.
	Not func(col string) string
	// Join joins a message's channel or tag rows to the message with the label's index leading
	// (SQLite's CROSS JOIN keeps the tables in the order written).
	Join string
	// ChannelFilter is the condition that message m, of any application, is on the channel bound
	// as its one ? argument.
	ChannelFilter string
	// Time is a time as a statement argument.
	Time func(time.Time) any
	// ScanTime returns a scan destination that sets *t from a NOT NULL time column, in UTC.
	ScanTime func(t *time.Time) any
	// ScanNullTime returns a scan destination that sets *t from a nullable time column: nil for
	// NULL, else the time in UTC.
	ScanNullTime func(t **time.Time) any
}

// Querier runs a store's reads: on its connection, or in one of its transactions. Errors come
// back classified as the store classifies them.
type Querier interface {
	// Query runs query and calls each for every row, in order, until each fails.
	Query(ctx context.Context, query string, args []any, each func(Scanner) error) error
	// QueryRow runs query, whose one row its Scan reads.
	QueryRow(ctx context.Context, query string, args ...any) Scanner
}

// Reads are the reads written once in this package (the lists, the batch and filter reads), run
// on one store's connection or transaction. A store's reader type embeds it, so that these
// methods are the store's.
type Reads struct {
	dialect *Dialect
	q       Querier
	cols    *Columns
}

// NewReads returns the reads of d's store, run on q, with the store's column lists.
func NewReads(d *Dialect, q Querier, cols *Columns) Reads {
	return Reads{dialect: d, q: q, cols: cols}
}

// Columns are a store's column lists, each in the order its entity's scanner reads (for a
// dialect, a list may cast a column, such as PostgreSQL's jsonb to text).
type Columns struct {
	Application, Endpoint, EventType, OperationalEvent, Delivery, Attempt, Message string
	// Token is hookd_tokens' hash, app_id, created_at, expires_at, read_only, feature_flags.
	Token string
}
