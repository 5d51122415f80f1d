package postgres

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Times are timestamptz, which keeps microseconds (pgx drops what is finer), and are read back
// in UTC.

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func fromNullTime(v sql.NullTime) *time.Time {
	if !v.Valid {
		return nil
	}
	t := v.Time.UTC()
	return &t
}

// rawBytes stores bytes exactly as given (a payload is signed byte for byte) in a bytea column;
// nil is NULL.
func rawBytes(v []byte) any {
	if v == nil {
		return nil
	}
	return v
}

func fromRawJSON(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}
