package sqlite

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Times are stored as INTEGER Unix microseconds and read back in UTC.

func micros(t time.Time) int64 { return t.UnixMicro() }

func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// rawJSON stores a JSON document's bytes exactly as given (a payload is signed byte for byte); nil
// is NULL.
func rawJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return []byte(v)
}

func fromRawJSON(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}
