package sqlite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookd/hookd/internal/sqlstore"
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

// rawJSON stores a JSON document's bytes exactly as given (a payload is signed byte for byte); nil
// is NULL.
func rawJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return []byte(v)
}

// dialect is SQLite's to package sqlstore: ? placeholders, lists led by one index, lists of
// strings as one JSON array, times as INTEGER microseconds.
var dialect = &sqlstore.Dialect{
	LeadingFilter: func(col string) string { return "+" + col },
	InList:        func(col string) string { return col + " IN (SELECT value FROM json_each(?))" },
	ListArg:       func(v []string) any { return jsonList(v) },
	Not:           func(col string) string { return col + " = 0" },
	Join:          "CROSS JOIN",
	ChannelFilter: "EXISTS (SELECT 1 FROM json_each(m.channels) c WHERE c.value = ?)",
	Time:          func(t time.Time) any { return micros(t) },
	ScanTime:      func(t *time.Time) any { return microsDest{t} },
	ScanNullTime:  func(t **time.Time) any { return nullMicrosDest{t} },
}

// microsDest scans an INTEGER of Unix microseconds into a time, in UTC.
type microsDest struct{ t *time.Time }

func (d microsDest) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("time column holds %T, want INTEGER microseconds", src)
	}
	*d.t = fromMicros(v)
	return nil
}

// nullMicrosDest scans a nullable INTEGER of Unix microseconds into a time, in UTC, or nil.
type nullMicrosDest struct{ t **time.Time }

func (d nullMicrosDest) Scan(src any) error {
	if src == nil {
		*d.t = nil
		return nil
	}
	var t time.Time
	if err := (microsDest{&t}).Scan(src); err != nil {
		return err
	}
	*d.t = &t
	return nil
}

// columns are the store's column lists for package sqlstore's reads.
var columns = sqlstore.Columns{
	Application: applicationCols, Endpoint: endpointCols, EventType: eventTypeCols,
	OperationalEvent: operationalEventCols, Delivery: deliveryCols, Attempt: attemptCols, Message: messageCols,
	Token: `hash, app_id, created_at, expires_at, read_only, feature_flags`,
}
