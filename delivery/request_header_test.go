package delivery

import (
	"net/http"
	"reflect"
	"testing"
)

// requestHeader copies the caller's headers under canonical names, joins two spellings of one
// name, adds the defaults when absent, and hands out value lists that do not overlap.
func TestRequestHeader(t *testing.T) {
	t.Parallel()
	c := New(&Config{UserAgent: "hookd-test"})
	tests := []struct {
		name string
		in   http.Header
		want http.Header
	}{
		{"defaults", nil, http.Header{"Content-Type": {"application/json"}, "User-Agent": {"hookd-test"}}},
		{"kept", http.Header{"Content-Type": {"text/plain"}, "User-Agent": {"me"}, "X-A": {"1", "2"}},
			http.Header{"Content-Type": {"text/plain"}, "User-Agent": {"me"}, "X-A": {"1", "2"}}},
		{"canonical", http.Header{"webhook-id": {"msg_1"}}, http.Header{"Webhook-Id": {"msg_1"},
			"Content-Type": {"application/json"}, "User-Agent": {"hookd-test"}}},
		{"no values", http.Header{"X-Empty": nil}, http.Header{"X-Empty": nil,
			"Content-Type": {"application/json"}, "User-Agent": {"hookd-test"}}},
	}
	for _, tt := range tests {
		if got := c.requestHeader(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: requestHeader(%v) = %v; want %v", tt.name, tt.in, got, tt.want)
		}
	}

	joined := c.requestHeader(http.Header{"x-b": {"1"}, "X-B": {"2"}})
	if vs := joined["X-B"]; len(vs) != 2 || vs[0] == vs[1] {
		t.Errorf("two spellings of X-B give %q; want both values", vs)
	}

	in := http.Header{"X-A": {"a"}, "X-B": {"b"}}
	out := c.requestHeader(in)
	out["X-A"] = append(out["X-A"], "more")
	out["Content-Type"] = append(out["Content-Type"], "more")
	if out["X-B"][0] != "b" || out["User-Agent"][0] != "hookd-test" || len(out["X-B"]) != 1 {
		t.Errorf("appending to one name's values changed another's: %v", out)
	}
	if len(in["X-A"]) != 1 {
		t.Errorf("the caller's header changed: %v", in)
	}
}
