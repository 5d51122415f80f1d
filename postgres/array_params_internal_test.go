package postgres

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The array parameters arrive as the slices pgx encodes by itself would: each compared, on the
// server, with the same values sent as a plain slice.
func TestArrayParamsEncodeAsSlices(t *testing.T) {
	t.Parallel()
	u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset")
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	t0 := time.Date(2026, 12, 2, 14, 0, 0, 123456000, time.UTC)
	t1 := t0.Add(time.Hour).In(time.FixedZone("x", 3600))
	texts := []string{"", "a", "é ✓", `quote " and \ back`, "{brace}, comma", "NULL"}
	times := []time.Time{t0, t1}
	tids := []pgtype.TID{{BlockNumber: 0, OffsetNumber: 1, Valid: true}, {BlockNumber: 4294967295, OffsetNumber: 65535, Valid: true}}
	ints := []int64{0, 1, -1, 1 << 62, -1 << 63}
	nullable := []*time.Time{nil, &t0, nil, &t1}
	opts := make(nullTimeArray, len(nullable))
	for i, p := range nullable {
		opts[i] = optTime{p}
	}
	cases := []struct {
		name, sql   string
		plain, ours any
	}{
		{"text", `SELECT $1::text[] IS NOT DISTINCT FROM $2::text[], $2::text[]::text`, texts, textArray(texts)},
		{"empty text", `SELECT $1::text[] IS NOT DISTINCT FROM $2::text[], $2::text[]::text`, []string{}, textArray{}},
		{"nil text", `SELECT $1::text[] IS NOT DISTINCT FROM $2::text[], coalesce($2::text[]::text, 'NULL')`, []string(nil), textArray(nil)},
		{"times", `SELECT $1::timestamptz[] IS NOT DISTINCT FROM $2::timestamptz[], $2::timestamptz[]::text`, times, timeArray(times)},
		{"tids", `SELECT $1::tid[] IS NOT DISTINCT FROM $2::tid[], $2::tid[]::text`, tids, tidArray(tids)},
		{"nil tids", `SELECT $1::tid[] IS NOT DISTINCT FROM $2::tid[], coalesce($2::tid[]::text, 'NULL')`, []pgtype.TID(nil), tidArray(nil)},
		{"bigints", `SELECT $1::bigint[] IS NOT DISTINCT FROM $2::bigint[], $2::bigint[]::text`, ints, int64Array(ints)},
		{"empty bigints", `SELECT $1::bigint[] IS NOT DISTINCT FROM $2::bigint[], $2::bigint[]::text`, []int64{}, int64Array{}},
		{"nullable times", `SELECT $1::timestamptz[] IS NOT DISTINCT FROM $2::timestamptz[], $2::timestamptz[]::text`, nullable, opts},
	}
	for _, tc := range cases {
		var same bool
		var text string
		if err := c.QueryRow(ctx, tc.sql, tc.plain, tc.ours).Scan(&same, &text); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !same {
			t.Errorf("%s: the server reads %s; want what %#v encodes to", tc.name, text, tc.plain)
		}
	}
}
