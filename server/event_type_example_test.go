package server

import (
	"encoding/json"
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
