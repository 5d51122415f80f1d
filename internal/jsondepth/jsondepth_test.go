package jsondepth

import (
	"strings"
	"testing"
)

func TestDepth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		json  string
		limit int
		want  int
	}{
		{"scalar", `"x"`, 10, 0},
		{"empty object", `{}`, 10, 1},
		{"object in array", `[{"a":1},{"b":[2]}]`, 10, 3},
		{"brackets in a string", `{"a":"[[{{"}`, 10, 1},
		{"escaped quote in a string", `{"a":"\"[[["}`, 10, 1},
		{"escaped backslash ends the string", `{"a":"\\",  "b":[[1]]}`, 10, 3},
		{"at the limit", strings.Repeat("[", 5) + strings.Repeat("]", 5), 5, 5},
		{"past the limit stops counting", strings.Repeat("[", 9000) + strings.Repeat("]", 9000), 128, 129},
	}
	for _, c := range cases {
		if got := Depth([]byte(c.json), c.limit); got != c.want {
			t.Errorf("%s: Depth = %d, want %d", c.name, got, c.want)
		}
	}
}
