// Package sqlcodec is how hookd's SQL stores write lists and maps: as JSON text, an empty one as
// NULL, and NULL read back as nil; optional strings that take part in a unique key as NULL when
// empty; and free text, such as an error, cut to fit a text column (Text).
package sqlcodec

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// NullString stores "" as NULL, for optional strings in a unique key.
func NullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// EncodeStrings returns v as JSON text, or nil (NULL) when it is empty.
func EncodeStrings(v []string) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode list: %w", err)
	}
	return string(b), nil
}

// EncodeMap returns v as JSON text, or nil (NULL) when it is empty.
func EncodeMap(v map[string]string) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode map: %w", err)
	}
	return string(b), nil
}

// DecodeStrings reads a list written by EncodeStrings; NULL and an empty list read back as nil.
func DecodeStrings(v sql.NullString) ([]string, error) {
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

// DecodeMap reads a map written by EncodeMap; NULL and an empty map read back as nil.
func DecodeMap(v sql.NullString) (map[string]string, error) {
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

// EndpointConfig is an endpoint's lists and maps, encoded for its columns (event_types,
// channels, headers, metadata).
type EndpointConfig struct {
	EventTypes, Channels, Headers, Metadata any
}

// EncodeEndpointConfig encodes ep's lists and maps.
func EncodeEndpointConfig(ep *hookd.Endpoint) (c EndpointConfig, err error) {
	if c.EventTypes, err = EncodeStrings(ep.EventTypes); err != nil {
		return c, err
	}
	if c.Channels, err = EncodeStrings(ep.Channels); err != nil {
		return c, err
	}
	if c.Headers, err = EncodeMap(ep.Headers); err != nil {
		return c, err
	}
	if c.Metadata, err = EncodeMap(ep.Metadata); err != nil {
		return c, err
	}
	return c, nil
}

// DecodeEndpointConfig sets ep's lists and maps from their columns.
func DecodeEndpointConfig(ep *hookd.Endpoint, eventTypes, channels, headers, metadata sql.NullString) (err error) {
	if ep.EventTypes, err = DecodeStrings(eventTypes); err != nil {
		return err
	}
	if ep.Channels, err = DecodeStrings(channels); err != nil {
		return err
	}
	if ep.Headers, err = DecodeMap(headers); err != nil {
		return err
	}
	ep.Metadata, err = DecodeMap(metadata)
	return err
}

// Text makes s fit a text column on every store: at most n bytes, valid UTF-8, no NUL (which
// PostgreSQL's text cannot hold).
func Text(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
}

// EncodeSchedule returns a retry schedule as text of milliseconds apart by commas ("5000,60000"),
// "" for an empty one (no retries) and nil (NULL) for nil (inherit).
func EncodeSchedule(s []time.Duration) any {
	if s == nil {
		return nil
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return strings.Join(parts, ",")
}

// DecodeSchedule reads a schedule written by EncodeSchedule: NULL as nil, "" as empty.
func DecodeSchedule(v sql.NullString) ([]time.Duration, error) {
	if !v.Valid {
		return nil, nil
	}
	out := []time.Duration{}
	if v.String == "" {
		return out, nil
	}
	for _, p := range strings.Split(v.String, ",") {
		ms, err := strconv.ParseInt(p, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("decode retry schedule %q: %q is not milliseconds", v.String, p)
		}
		out = append(out, time.Duration(ms)*time.Millisecond)
	}
	return out, nil
}

// EncodeTimeout returns an attempt timeout in milliseconds, or nil (NULL) for 0 (inherit).
func EncodeTimeout(d time.Duration) any {
	if d <= 0 {
		return nil
	}
	return d.Milliseconds()
}

// DecodeTimeout reads a timeout written by EncodeTimeout: NULL as 0.
func DecodeTimeout(v sql.NullInt64) time.Duration {
	if !v.Valid {
		return 0
	}
	return time.Duration(v.Int64) * time.Millisecond
}
