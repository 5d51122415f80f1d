package postgres

import (
	"database/sql"
	"encoding/json"
	"fmt"
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

// nullString stores "" as NULL, for optional strings in a unique key.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Lists and maps are jsonb, bound as JSON text and read back as text (the columns are selected
// with ::text); an empty one is stored as NULL, and NULL reads back as nil.

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
