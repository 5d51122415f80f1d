package delivery_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd/delivery"
)

func TestBoundHeader(t *testing.T) {
	t.Parallel()
	many := http.Header{}
	for i := range 40 {
		many.Set(fmt.Sprintf("X-H%02d", i), "v")
	}
	big := strings.Repeat("b", delivery.MaxHeaderBytes)
	tests := []struct {
		name        string
		in          http.Header
		wantNames   int
		wantOmitted int
	}{
		{"nil", nil, 0, 0},
		{"small", http.Header{"A": {"1", "2"}, "B": {"3"}}, 2, 0},
		{"more values than the bound", many, delivery.MaxHeaderFields, 40 - delivery.MaxHeaderFields},
		{"a value too large is left out, the next kept", http.Header{"A": {big}, "B": {"small"}}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, omitted := delivery.BoundHeader(tc.in)
			if len(got) != tc.wantNames || omitted != tc.wantOmitted {
				t.Errorf("BoundHeader: %d names, %d omitted; want %d and %d", len(got), omitted, tc.wantNames, tc.wantOmitted)
			}
		})
	}
	got, _ := delivery.BoundHeader(many)
	if got.Get("X-H00") != "v" || got.Get("X-H31") != "v" || got.Get("X-H32") != "" {
		t.Errorf("the first names in order are not the ones kept: %v", got)
	}
}
