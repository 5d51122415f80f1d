package sqlcodec

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc"},
		{"a\x00b", 10, "ab"},
		{"é", 1, ""},         // a cut inside a rune drops the half
		{"x\xffy", 10, "xy"}, // invalid UTF-8 dropped
	} {
		if got := Text(tc.in, tc.n); got != tc.want {
			t.Errorf("Text(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
