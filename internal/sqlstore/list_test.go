package sqlstore

import (
	"reflect"
	"testing"
)

func TestListSQL(t *testing.T) {
	sqlite := &Dialect{LeadingFilter: func(col string) string { return "+" + col }}
	postgres := &Dialect{Numbered: true, MergedUnion: true}
	build := func(d *Dialect) *List {
		l := NewList(d, "m.id, m.app_id", "hookd_messages m", "m.id")
		l.Equal("m.app_id", "app")
		l.Equal("m.endpoint_id", "")
		l.Equal("m.event_id", "ev")
		l.AnyOf(Condition{SQL: "m.event_type = ?", Args: []any{"a"}}, Condition{SQL: "m.event_type = ?", Args: []any{"b"}})
		return l
	}
	for _, tc := range []struct {
		name     string
		d        *Dialect
		bound    string
		limit    int
		want     string
		wantArgs []any
	}{
		{
			name: "sqlite page", d: sqlite, bound: "m9", limit: 3,
			want: "SELECT * FROM (SELECT * FROM (SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = ? AND +m.event_id = ? AND m.event_type = ? AND m.id < ? ORDER BY m.id DESC LIMIT 3)" +
				" UNION ALL SELECT * FROM (SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = ? AND +m.event_id = ? AND m.event_type = ? AND m.id < ? ORDER BY m.id DESC LIMIT 3)) ORDER BY 1 DESC LIMIT 3",
			wantArgs: []any{"app", "ev", "a", "m9", "app", "ev", "b", "m9"},
		},
		{
			name: "sqlite exists", d: sqlite, bound: "", limit: 0,
			want: "SELECT * FROM (SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = ? AND +m.event_id = ? AND m.event_type = ?)" +
				" UNION ALL SELECT * FROM (SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = ? AND +m.event_id = ? AND m.event_type = ?)",
			wantArgs: []any{"app", "ev", "a", "app", "ev", "b"},
		},
		{
			name: "postgres page", d: postgres, bound: "m9", limit: 3,
			want: "SELECT * FROM ((SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = $1 AND m.event_id = $2 AND m.event_type = $3 AND m.id < $4 ORDER BY m.id DESC LIMIT 3)" +
				" UNION ALL (SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = $5 AND m.event_id = $6 AND m.event_type = $7 AND m.id < $8 ORDER BY m.id DESC LIMIT 3)) u ORDER BY 1 DESC LIMIT 3",
			wantArgs: []any{"app", "ev", "a", "m9", "app", "ev", "b", "m9"},
		},
		{
			name: "postgres exists", d: postgres, bound: "", limit: 0,
			want: "SELECT * FROM ((SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = $1 AND m.event_id = $2 AND m.event_type = $3)" +
				" UNION ALL (SELECT m.id, m.app_id FROM hookd_messages m WHERE m.app_id = $4 AND m.event_id = $5 AND m.event_type = $6)) u",
			wantArgs: []any{"app", "ev", "a", "app", "ev", "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := build(tc.d)
			got, args := l.SQL(l.Cols, tc.bound, false, tc.limit)
			if got != tc.want {
				t.Errorf("SQL\n got %s\nwant %s", got, tc.want)
			}
			if !reflect.DeepEqual(args, tc.wantArgs) {
				t.Errorf("args %v, want %v", args, tc.wantArgs)
			}
		})
	}
}
