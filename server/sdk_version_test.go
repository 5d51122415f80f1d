package server

import (
	"net/http/httptest"
	"testing"
)

func TestSDKOlderThan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ua   string
		want bool
	}{
		{"", false},
		{"curl/8.5.0", false},
		{"svix-libs/1.44.0/go", true},
		{"svix-libs/1.69.9/python", true},
		{"svix-libs/0.85.1/javascript", true},
		{"svix-libs/1.70.0/go", false},
		{"svix-libs/1.99.1/go", false},
		{"svix-libs/2.0.0/rust", false},
		{"svix-libs/1/go", false},
		{"svix-libs/x.y/go", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("User-Agent", c.ua)
		if got := sdkOlderThan(r, 1, 70); got != c.want {
			t.Errorf("%q: older than 1.70 = %v, want %v", c.ua, got, c.want)
		}
	}
}
