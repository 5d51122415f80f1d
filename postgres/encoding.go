package postgres

import (
	"fmt"
	"time"

	"github.com/hookd/hookd/internal/sqlstore"
	"github.com/jackc/pgx/v5/pgtype"
)

// Times are timestamptz, which keeps microseconds (pgx drops what is finer), and are read back
// in UTC.

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// rawBytes stores bytes exactly as given (a payload is signed byte for byte) in a bytea column;
// nil is NULL.
func rawBytes(v []byte) any {
	if v == nil {
		return nil
	}
	return v
}

// dialect is PostgreSQL's to package sqlstore: $n placeholders, merged union branches, lists of
// strings as text[], times as timestamptz.
var dialect = &sqlstore.Dialect{
	Numbered:      true,
	MergedUnion:   true,
	InList:        func(col string) string { return col + " = ANY (?::text[])" },
	ListArg:       func(v []string) any { return v },
	Not:           func(col string) string { return "NOT " + col },
	Join:          "JOIN",
	ChannelFilter: "EXISTS (SELECT 1 FROM hookd_message_channels c WHERE c.message_id = m.id AND c.channel = ?)",
	Time:          func(t time.Time) any { return t },
	ScanTime:      func(t *time.Time) any { return &utcTime{t} },
	ScanNullTime:  func(t **time.Time) any { return &nullUTCTime{t} },
	// An endpoint's deliveries are in two partial indexes (migration 15):
	// hookd_deliveries_endpoint_id_delivered and hookd_deliveries_endpoint_id_undelivered.
	StatusBranches: true,
}

// utcTime scans a timestamptz into a time, in UTC: through pgx (pgtype.TimestamptzScanner) or
// through database/sql (sql.Scanner).
type utcTime struct{ t *time.Time }

func (d *utcTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid || v.InfinityModifier != pgtype.Finite {
		return fmt.Errorf("time column holds %v, want a finite time", v)
	}
	*d.t = v.Time.UTC()
	return nil
}

func (d *utcTime) Scan(src any) error {
	v, ok := src.(time.Time)
	if !ok {
		return fmt.Errorf("time column holds %T, want a time", src)
	}
	*d.t = v.UTC()
	return nil
}

// nullUTCTime scans a nullable timestamptz into a time, in UTC, or nil.
type nullUTCTime struct{ t **time.Time }

func (d *nullUTCTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		*d.t = nil
		return nil
	}
	var t time.Time
	if err := (&utcTime{&t}).ScanTimestamptz(v); err != nil {
		return err
	}
	*d.t = &t
	return nil
}

func (d *nullUTCTime) Scan(src any) error {
	if src == nil {
		*d.t = nil
		return nil
	}
	var t time.Time
	if err := (&utcTime{&t}).Scan(src); err != nil {
		return err
	}
	*d.t = &t
	return nil
}

// columns are the store's column lists for package sqlstore's reads.
var columns = sqlstore.Columns{
	Application: applicationCols, Endpoint: endpointCols, EventType: eventTypeCols,
	OperationalEvent: operationalEventCols, Delivery: deliveryCols, Attempt: attemptCols, Message: messageCols,
	Token: `hash, app_id, created_at, expires_at, read_only, feature_flags::text`,
}
