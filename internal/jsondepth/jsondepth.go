// Package jsondepth measures how deeply a JSON text nests, without decoding it, so that a payload
// too deep to render or to decode cheaply is refused before anything holds it as values.
package jsondepth

// MaxPayload is the deepest nesting a payload may have when it comes from the API or a portal's
// form: the payload object itself is level 1. Svix's server decodes the request body with
// serde_json, whose recursion limit (128) bounds the payload alike.
const MaxPayload = 128

// Depth returns the deepest nesting of objects and arrays in the JSON text b (0 for a scalar),
// counting no further than limit+1: a result above limit means "deeper than limit". Brackets
// inside strings do not count; b is not otherwise checked to be JSON.
func Depth(b []byte, limit int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
