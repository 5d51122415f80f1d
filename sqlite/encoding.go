package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
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

// nullString stores "" as NULL, for optional strings in a unique key.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Lists and maps are stored as JSON text, and an empty one as NULL; NULL reads back as nil.

func encodeStrings(v []string) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode list: %w", err)
	}
	return string(b), nil
}

func encodeMap(v map[string]string) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode map: %w", err)
	}
	return string(b), nil
}

func decodeStrings(v sql.NullString) ([]string, error) {
	if !v.Valid {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v.String), &out); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func decodeMap(v sql.NullString) (map[string]string, error) {
	if !v.Valid {
		return nil, nil
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(v.String), &out); err != nil {
		return nil, fmt.Errorf("decode map: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
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
