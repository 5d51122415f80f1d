package fsfault

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// CheckHolds fails the test unless the hookd SQLite database db passes PRAGMA integrity_check
// and holds exactly the messages whose event ids are accepted, each with a delivery: an outage
// left nothing half-written behind, and lost nothing accepted.
func CheckHolds(t testing.TB, db *sql.DB, accepted []string) {
	t.Helper()
	ctx := context.Background()
	var integrity string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check: %q, %v", integrity, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT m.event_id FROM hookd_messages m
		WHERE EXISTS (SELECT 1 FROM hookd_deliveries d WHERE d.message_id = m.id)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var total int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM hookd_messages`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(accepted)
	slices.Sort(stored)
	slices.Sort(want)
	if !slices.Equal(stored, want) || total != len(want) {
		t.Fatalf("the file holds %d messages, %d of them with a delivery: %v; want the %d accepted: %v", total, len(stored), stored, len(want), want)
	}
}
