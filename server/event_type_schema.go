package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxSchemaNesting bounds how deep a schema's JSON nests, as Svix's JSON parser bounds a body (128
// levels), so that compiling one costs no more than its size.
const maxSchemaNesting = 128

// schemaURL names the schema being compiled; a relative $ref resolves against it, to a URL that
// is never loaded.
const schemaURL = "https://event-type.hookd.invalid/schema.json"

// errRemoteRef is what the compiler gets for a $ref outside the schema: hookd loads no schema
// from the network or the disk.
var errRemoteRef = errors.New("hookd loads no schema from outside the event type's own")

// noLoader refuses every URL the compiler asks for: the drafts' meta-schemas are built in, and
// anything else would be a fetch.
type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errRemoteRef }

// checkSchemas checks schemas: null, or an object whose values, one per version, are each a
// JSON Schema, compiled as Draft 7 as Svix compiles every one of them. It returns nil for null.
func checkSchemas(raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil || m == nil {
		return nil, invalidField("body", "schemas", "must be an object of JSON Schemas by version, e.g. {\"1\": {\"type\": \"object\"}}")
	}
	versions := make([]string, 0, len(m))
	for v := range m {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for _, v := range versions {
		if err := compileSchema(m[v]); err != nil {
			return nil, invalidField("body", "schemas", "the schema of version "+strconv.Quote(v)+" is not a valid JSON Schema (Draft 7): "+err.Error())
		}
	}
	return json.RawMessage(bytes.Clone(t)), nil
}

// compileSchema compiles one schema as Draft 7, whatever its $schema says, loading nothing.
func compileSchema(raw json.RawMessage) error {
	if err := checkDepth(raw); err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	switch d := doc.(type) {
	case map[string]any:
		delete(d, "$schema")
	case bool:
	default:
		return errors.New("a schema is an object or a boolean")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return fmt.Errorf("add schema: %w", err)
	}
	if _, err := c.Compile(schemaURL); err != nil {
		return errors.New(schemaError(err))
	}
	return nil
}

// schemaError is the compiler's error in one line, without the name hookd gives the schema: for
// a schema the meta-schema refuses, where and why.
func schemaError(err error) string {
	msg := err.Error()
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			lines := strings.Split(ve.Error(), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(strings.TrimSpace(l), "- ")
			}
			if len(lines) > 1 {
				lines = lines[1:] // the first names the meta-schema
			}
			msg = strings.Join(lines, "; ")
		}
	}
	msg = strings.ReplaceAll(msg, strings.TrimSuffix(schemaURL, "schema.json"), "")
	return strings.ReplaceAll(msg, "jsonschema: ", "")
}

// checkDepth refuses JSON nested more than maxSchemaNesting levels.
func checkDepth(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > maxSchemaNesting {
				return fmt.Errorf("nested more than %d levels deep", maxSchemaNesting)
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
