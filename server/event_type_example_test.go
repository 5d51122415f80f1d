package server

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

func TestEventTypeExampleFromSchemaTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		schema string
		want   string
	}{
		{`{"type":"string"}`, `"string"`},
		{`{"type":"string","maxLength":3}`, `"str"`},
		{`{"type":"integer","exclusiveMinimum":5}`, `6`},
		{`{"type":"integer","maximum":-2}`, `-2`},
		{`{"type":"number"}`, `0`},
		{`{"type":"null"}`, `null`},
		{`{"type":"array","maxItems":0,"items":{"type":"string"}}`, `[]`},
		{`{"default":{"a":1}}`, `{"a":1}`},
		{`{"allOf":[{"properties":{"a":{"type":"boolean"}}},{"properties":{"b":{"const":2}}}]}`, `{"a":true,"b":2}`},
		{`{"anyOf":[{"type":"boolean"}]}`, `true`},
		{`{"$ref":"https://elsewhere.example/schema.json"}`, `null`},
		{`{"$ref":"#/definitions/a~1b","definitions":{"a/b":{"type":"integer"}}}`, `0`},
		{`{"$ref":"#"}`, `null`},
		{`{"properties":{"x":{"type":"string","format":"date"}}}`, `{"x":"2024-01-01"}`},
	} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(c.schema), &schema); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(exampleFromSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s: %s, want %s", c.schema, got, c.want)
		}
	}
}

// TestEventTypeExampleBounded: recursive and explosive schemas make a bounded example.
func TestEventTypeExampleBounded(t *testing.T) {
	t.Parallel()
	var recursive map[string]any
	if err := json.Unmarshal([]byte(`{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#/$defs/node"}}}}}`), &recursive); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(exampleFromSchema(recursive))
	if string(got) != `{"child":null,"name":"string"}` {
		t.Fatalf("recursive: %s", got)
	}
	// Arrays of 16 arrays of 16 ... eight deep: 16^8 values unbounded.
	schema := map[string]any{"type": "string"}
	for range 8 {
		schema = map[string]any{"type": "array", "minItems": 16.0, "items": schema}
	}
	got, err := json.Marshal(exampleFromSchema(schema))
	if err != nil || len(got) > 1<<20 {
		t.Fatalf("explosive: %d bytes, %v", len(got), err)
	}
}

// TestGenerateExampleAmplification sends generate-example small schemas whose examples, made in
// full, are tens of megabytes: strings of minLength 4,096 in arrays of 16 arrays of 16..., and a
// large default repeated through a $ref. Each answer is a JSON example of at most about
// maxExampleBytes, and the request allocates under 50 MiB. It does not run in parallel, so the
// allocations are this test's.
func TestGenerateExampleAmplification(t *testing.T) {
	b := setup(t, nil)
	strings4k := `{"type":"string","minLength":4096}`
	for range 4 {
		strings4k = `{"type":"array","minItems":16,"items":` + strings4k + `}`
	}
	bigDefault := `{"definitions":{"d":{"default":"` + strings.Repeat("x", 200_000) + `"}},` +
		`"type":"array","minItems":16,"items":{"type":"array","minItems":16,"items":{"$ref":"#/definitions/d"}}}`
	longKey := `{"definitions":{"o":{"properties":{"` + strings.Repeat("k", 200_000) + `":{"type":"boolean"}}}},` +
		`"type":"array","minItems":16,"items":{"type":"array","minItems":16,"items":{"$ref":"#/definitions/o"}}}`
	for _, c := range []struct{ name, schema string }{
		{"long strings", strings4k},
		{"a large default through a $ref", bigDefault},
		{"a long property name through a $ref", longKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resp := b.do(t, "POST", "/api/v1/event-type/schema/generate-example", `{"schema":`+c.schema+`}`)
			body, err := io.ReadAll(resp.Body)
			runtime.ReadMemStats(&after)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", resp.StatusCode, err)
			}
			var out struct {
				Example []any `json:"example"`
			}
			if err := json.Unmarshal(body, &out); err != nil || len(out.Example) == 0 {
				t.Fatalf("answer %.200s: %v", body, err)
			}
			if len(body) > maxExampleBytes+64<<10 {
				t.Errorf("the example is %d bytes, want about %d at most", len(body), maxExampleBytes)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
				t.Errorf("the request allocated %d MiB, want under 50", alloc>>20)
			}
		})
	}
}
