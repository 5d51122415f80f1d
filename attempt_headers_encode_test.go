package hookd_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"

	"github.com/hookd/hookd"
)

// AttemptHeaders.Encode writes what json.Marshal writes, byte for byte, so that the records
// written before and after it read alike and compare alike.
func TestAttemptHeadersEncodeIsJSONMarshal(t *testing.T) {
	t.Parallel()
	cases := []hookd.AttemptHeaders{
		{Omitted: 3},
		{Omitted: -1},
		{Header: http.Header{}, Omitted: 2},
		{Header: http.Header{"Content-Type": {"application/json"}}},
		{Header: http.Header{"B": {"2", "3"}, "A": {"1"}, "C": nil, "D": {}}, Omitted: 7},
		{Header: http.Header{"X-Html": {"<a href=\"x\">&amp;</a>"}, "X-Ctl": {"a\tb\nc\rd\x00e\x1f\x7f"}}},
		{Header: http.Header{"X-Utf8": {"héllo wörld ✓", "\u2028\u2029", "bad \xff\xfe utf-8", `back\slash`}}},
		{Header: http.Header{"Ünïcode-Name": {""}, "": {"empty name"}}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("aZ09-_ ;=,\"\\<>&\t\n\x00\x7f\xc3\xa9\xe2\x80\xa8\xff")
	for range 500 {
		h := http.Header{}
		for range r.IntN(6) {
			var vs []string
			for range r.IntN(4) {
				b := make([]byte, r.IntN(12))
				for i := range b {
					b[i] = alphabet[r.IntN(len(alphabet))]
				}
				vs = append(vs, string(b))
			}
			h["K"+strconv.Itoa(r.IntN(100))] = vs
		}
		cases = append(cases, hookd.AttemptHeaders{Header: h, Omitted: r.IntN(3)})
	}
	for _, c := range cases {
		if len(c.Header) == 0 && c.Omitted == 0 {
			continue // nothing: "", checked below
		}
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Encode(); got != string(want) {
			t.Errorf("Encode(%#v)\n got %s\nwant %s", c, got, want)
		}
		back, err := hookd.DecodeAttemptHeaders(c.Encode())
		if err != nil {
			t.Fatalf("DecodeAttemptHeaders(%s): %v", c.Encode(), err)
		}
		if back.Omitted != c.Omitted || len(back.Header) != len(c.Header) {
			t.Errorf("DecodeAttemptHeaders(Encode(%#v)) = %#v", c, back)
		}
	}
	if got := (hookd.AttemptHeaders{}).Encode(); got != "" {
		t.Errorf("the empty AttemptHeaders encode as %q; want \"\"", got)
	}
}
