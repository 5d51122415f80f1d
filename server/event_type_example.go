package server

import (
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
)

// generateExample answers POST /api/v1/event-type/schema/generate-example ({"schema": {...}})
// with {"example": ...}, an instance of the schema. See exampleFromSchema for what it follows.
func (s *Server) generateExample(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	var in struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	var schema map[string]any
	if len(in.Schema) == 0 || json.Unmarshal(in.Schema, &schema) != nil || schema == nil {
		return invalidField("body", "schema", "must be a JSON Schema object")
	}
	writeJSON(w, http.StatusOK, map[string]any{"example": exampleFromSchema(schema)})
	return nil
}

// Bounds of exampleFromSchema: nesting depth, values made in all (minItems and properties
// multiply), the items of an array, the characters of a string made from minLength, and the
// bytes of the example's JSON (a const, default or example counts its whole size each time a
// $ref or an array repeats it). Past the depth, the values or the bytes it writes null, and
// objects stop gaining properties once the bytes are spent: the example is cut, not refused.
const (
	maxSchemaDepth   = 32
	maxExampleValues = 10000
	maxExampleItems  = 16
	maxExampleString = 4096
	maxExampleBytes  = 256 << 10
)

// exampleFromSchema makes an instance of a JSON Schema. It follows, in this order: const, the
// first of examples, example, default, the first of enum; a local $ref (#/definitions/...,
// #/$defs/..., any JSON pointer; a reference already being expanded is null, which ends
// recursive schemas); the first of oneOf or anyOf; allOf, merged; then type (the first that is
// not "null" when it is a list): every property of an object, one item of an array (minItems of
// them, up to 16), a string shaped by its format and minLength / maxLength, the minimum of a
// number or integer (0 when none, kept within maximum), true. It does not generate strings that
// match a pattern.
func exampleFromSchema(schema map[string]any) any {
	g := &exampleGen{root: schema, expanding: map[string]bool{}, resolved: map[string]any{}, left: maxExampleBytes}
	return g.of(schema, 0)
}

type exampleGen struct {
	root      map[string]any
	expanding map[string]bool // $refs on the current path
	resolved  map[string]any  // each $ref followed once, however often it is repeated
	values    int
	left      int // bytes of JSON the example may still take
}

// spend takes n bytes from what the example may still take; when they do not fit, nothing more
// does and spend is false.
func (g *exampleGen) spend(n int) bool {
	if n > g.left {
		g.left = 0
		return false
	}
	g.left -= n
	return true
}

// given returns v, a value the schema gives (const, an example, a default), when its JSON fits.
func (g *exampleGen) given(v any) any {
	if !g.spend(jsonSize(v, g.left+1)) {
		return nil
	}
	return v
}

func (g *exampleGen) of(s any, depth int) any {
	m, ok := s.(map[string]any)
	g.values++
	if !ok || depth > maxSchemaDepth || g.values > maxExampleValues || !g.spend(len("null")) {
		return nil
	}
	if v, ok := m["const"]; ok {
		return g.given(v)
	}
	if v, ok := m["examples"].([]any); ok && len(v) > 0 {
		return g.given(v[0])
	}
	for _, k := range []string{"example", "default"} {
		if v, ok := m[k]; ok {
			return g.given(v)
		}
	}
	if v, ok := m["enum"].([]any); ok && len(v) > 0 {
		return g.given(v[0])
	}
	if ref, ok := m["$ref"].(string); ok {
		if g.expanding[ref] {
			return nil
		}
		target, ok := g.resolved[ref]
		if !ok {
			target = resolveSchemaRef(g.root, ref)
			g.resolved[ref] = target
		}
		g.expanding[ref] = true
		defer delete(g.expanding, ref)
		return g.of(target, depth+1)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if v, ok := m[k].([]any); ok && len(v) > 0 {
			return g.of(v[0], depth+1)
		}
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		merged := map[string]any{}
		var last any
		for _, sub := range all {
			last = g.of(sub, depth+1)
			if obj, ok := last.(map[string]any); ok {
				for k, v := range obj {
					merged[k] = v
				}
			}
		}
		if _, isObj := last.(map[string]any); !isObj && len(merged) == 0 {
			return last
		}
		for k, v := range g.object(m, depth) {
			merged[k] = v
		}
		return merged
	}
	switch schemaTypeOf(m) {
	case "object":
		return g.object(m, depth)
	case "array":
		n := 1
		if v, ok := m["minItems"].(float64); ok && v > 1 {
			n = int(min(v, maxExampleItems))
		}
		if v, ok := m["maxItems"].(float64); ok && v < float64(n) {
			n = int(max(v, 0))
		}
		items := make([]any, 0, n)
		for range n {
			items = append(items, g.of(m["items"], depth+1))
		}
		return items
	case "string":
		if s := schemaStringExample(m); g.spend(len(s)) {
			return s
		}
		return nil
	case "integer":
		return int64(schemaNumberExample(m, true))
	case "number":
		return schemaNumberExample(m, false)
	case "boolean":
		return true
	}
	return nil
}

// object makes every property of an object schema, in the order of their names, until the
// example's bytes are spent.
func (g *exampleGen) object(m map[string]any, depth int) map[string]any {
	obj := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !g.spend(len(k) + len(`"":,`)) {
			break
		}
		obj[k] = g.of(props[k], depth+1)
	}
	return obj
}

// jsonSize is about the length of v's JSON, v as encoding/json decodes it; counting stops past
// limit.
func jsonSize(v any, limit int) int {
	switch v := v.(type) {
	case string:
		return len(v) + 2
	case map[string]any:
		n := 2
		for k, e := range v {
			if n > limit {
				break
			}
			n += len(k) + 4 + jsonSize(e, limit-n)
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			if n > limit {
				break
			}
			n += 1 + jsonSize(e, limit-n)
		}
		return n
	}
	return 8 // a number, a boolean, null
}

// schemaTypeOf is the schema's type, inferred from its keywords when it names none.
func schemaTypeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				return s
			}
		}
		return "null"
	}
	switch {
	case m["properties"] != nil:
		return "object"
	case m["items"] != nil:
		return "array"
	}
	return ""
}

func schemaStringExample(m map[string]any) string {
	var s string
	switch m["format"] {
	case "date-time":
		s = "2024-01-01T12:00:00Z"
	case "date":
		s = "2024-01-01"
	case "time":
		s = "12:00:00Z"
	case "email":
		s = "user@example.com"
	case "uri", "url", "iri":
		s = "https://example.com/"
	case "hostname":
		s = "example.com"
	case "ipv4":
		s = "192.0.2.1"
	case "ipv6":
		s = "2001:db8::1"
	case "uuid":
		s = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
	default:
		s = "string"
	}
	if v, ok := m["minLength"].(float64); ok && int(v) > len(s) {
		s += strings.Repeat("x", min(int(v), maxExampleString)-len(s))
	}
	if v, ok := m["maxLength"].(float64); ok && v >= 0 && int(v) < len(s) {
		s = s[:int(v)]
	}
	return s
}

func schemaNumberExample(m map[string]any, integer bool) float64 {
	step := 1e-3
	if integer {
		step = 1
	}
	v, set := 0.0, false
	if lo, ok := m["minimum"].(float64); ok {
		v, set = lo, true
	}
	if lo, ok := m["exclusiveMinimum"].(float64); ok && (!set || lo >= v) {
		v, set = lo+step, true
	}
	if hi, ok := m["maximum"].(float64); ok && v > hi {
		v = hi
	}
	if hi, ok := m["exclusiveMaximum"].(float64); ok && v >= hi {
		v = hi - step
	}
	if integer {
		v = math.Ceil(v)
	}
	return v
}

// resolveSchemaRef follows a local reference ("#", "#/definitions/Name", "#/$defs/Name", any JSON
// pointer into the root); nil for any other.
func resolveSchemaRef(root map[string]any, ref string) any {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	var cur any = root
	for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return cur
}

// SchemaExample returns the example send-example sends for an event type with these schemas
// (Svix's {"<version>": {JSON Schema}}): the newest version's first object in "examples" (or
// "example"); nil when there is none.
func SchemaExample(schemas json.RawMessage) json.RawMessage { return schemaExample(schemas) }

// PingEventType is Svix's built-in test event, which send-example sends as {"success":true}.
const PingEventType = pingEventType
