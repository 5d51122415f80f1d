package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestEventTypeSchemasCompile: every version's schema must compile as JSON Schema Draft 7, as
// Svix checks them; a $ref outside the schema is refused and never fetched. A refused schema is a
// 422 naming schemas, and nothing is stored.
func TestEventTypeSchemasCompile(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var fetched atomic.Int32
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	t.Cleanup(remote.Close)
	appReadJSON(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"live","description":"d","schemas":{"1":{"type":"object"}}}`), http.StatusCreated)

	nest := func(n int) string { return strings.Repeat(`{"items":`, n) + `{}` + strings.Repeat(`}`, n) }
	refused := []struct{ name, schemas, msg string }{
		{"readOnly not a boolean", `{"1":{"readOnly":15}}`, `version "1"`},
		{"unknown type", `{"1":{"type":"nope"}}`, `version "1"`},
		{"second version bad", `{"1":{"type":"object"},"2":{"required":"id"}}`, `version "2"`},
		{"a string", `{"1":"no"}`, `version "1"`},
		{"a number", `{"1":3}`, `version "1"`},
		{"bad pattern", `{"1":{"type":"string","pattern":"("}}`, `version "1"`},
		{"remote ref", `{"1":{"$ref":"` + remote.URL + `/schema.json"}}`, "loads no schema"},
		{"remote ref nested", `{"1":{"properties":{"a":{"$ref":"` + remote.URL + `/a.json#/x"}}}}`, "loads no schema"},
		{"relative ref", `{"1":{"$ref":"other.json"}}`, "loads no schema"},
		{"file ref", `{"1":{"$ref":"file:///etc/hostname"}}`, "loads no schema"},
		{"remote $id and ref", `{"1":{"$id":"` + remote.URL + `/base.json","$ref":"other.json"}}`, "loads no schema"},
		{"missing local ref", `{"1":{"$ref":"#/definitions/none"}}`, `version "1"`},
		{"too deep", `{"1":` + nest(128) + `}`, "nested more than 128"},
	}
	for _, c := range refused {
		for _, req := range []struct{ method, path, body string }{
			{"POST", "/api/v1/event-type", `{"name":"x","description":"d","schemas":` + c.schemas + `}`},
			{"PUT", "/api/v1/event-type/x", `{"description":"d","schemas":` + c.schemas + `}`},
			{"PUT", "/api/v1/event-type/live", `{"description":"d","schemas":` + c.schemas + `}`},
			{"PATCH", "/api/v1/event-type/live", `{"schemas":` + c.schemas + `}`},
		} {
			out := appReadJSON(t, b.do(t, req.method, req.path, req.body), http.StatusUnprocessableEntity)
			d := out["detail"].([]any)[0].(map[string]any)
			loc := d["loc"].([]any)
			if len(loc) != 2 || loc[0] != "body" || loc[1] != "schemas" || !strings.Contains(d["msg"].(string), c.msg) {
				t.Fatalf("%s: %s %s: detail %v, want schemas and %q", c.name, req.method, req.path, d, c.msg)
			}
		}
	}
	if n := fetched.Load(); n != 0 {
		t.Fatalf("the remote schema was fetched %d times", n)
	}
	appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/x", ""), http.StatusNotFound)
	live := appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/live", ""), http.StatusOK)
	if s := live["schemas"].(map[string]any)["1"].(map[string]any); len(s) != 1 || s["type"] != "object" {
		t.Fatalf("live schemas changed: %v", live["schemas"])
	}

	accepted := []string{
		`{}`,
		`{"1":true,"2":false}`,
		`{"1":{}}`,
		`{"1":{"type":"object","properties":{"id":{"$ref":"#/definitions/id"}},"definitions":{"id":{"type":"string"}}}}`,
		`{"1":{"$ref":"http://json-schema.org/draft-07/schema#"}}`,
		`{"1":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}}`,
		`{"1":{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"a":{"type":"string"}},"$ref":"#/$defs/a"}}`,
		`{"1":{"type":"object","properties":{"next":{"$ref":"#"}}}}`,
		`{"1":` + nest(127) + `}`,
	}
	for i, schemas := range accepted {
		out := appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/live", `{"schemas":`+schemas+`}`), http.StatusOK)
		if out["schemas"] == nil {
			t.Fatalf("accepted %d: %v", i, out)
		}
	}
	if n := fetched.Load(); n != 0 {
		t.Fatalf("a schema was fetched %d times", n)
	}
}
