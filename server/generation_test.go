package server

import (
	"net/http/httptest"
	"testing"
)

// Only the Go SDKs whose models reject unknown fields (up to 1.56.x) get the 1.44 shapes.
func TestGenerationOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ua, header string
		want       generation
	}{
		{"svix-libs/1.44.0/go", "", genV144},
		{"svix-libs/1.56.0/go", "", genV144},
		{"svix-libs/1.56.3/go/my-app", "", genV144},
		{"svix-libs/0.85.1/go", "", genV144},
		{"svix-libs/1.57.0/go go/go1.24.1", "", genCurrent},
		{"svix-libs/1.99.1/go go/go1.26.0", "", genCurrent},
		{"svix-libs/1.99.1/go/my-app go/go1.26.0", "", genCurrent},
		{"svix-libs/1.44.0/python", "", genCurrent},
		{"svix-libs/1.30.2/javascript", "", genCurrent},
		{"svix-libs/2.5.0/javascript", "", genCurrent},
		{"svix-libs/1.44.0/golang", "", genCurrent},
		{"svix-libs/x.y/go", "", genCurrent},
		{"curl/8.5.0", "", genCurrent},
		{"", "", genCurrent},
		{"", "1.44", genV144},
		{"svix-libs/1.99.1/go go/go1.26.0", "1.44", genV144},
	} {
		r := httptest.NewRequest("GET", "/api/v1/app", nil)
		r.Header.Set("User-Agent", c.ua)
		if c.header != "" {
			r.Header.Set("X-Hookd-Api-Generation", c.header)
		}
		if got := generationOf(r); got != c.want {
			t.Errorf("generationOf(User-Agent %q, X-Hookd-Api-Generation %q) = %d, want %d", c.ua, c.header, got, c.want)
		}
	}
}
