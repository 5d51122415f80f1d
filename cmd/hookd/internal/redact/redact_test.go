package redact

import "testing"

func TestURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"redis://:pw@h:6379/0", "redis://:xxxxx@h:6379/0"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://u:p%zz@h/db", "postgres://xxxxx@h/db"}, // unparsable: everything before the host goes
		{"file.db", "file.db"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
