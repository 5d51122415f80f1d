package hookd

import "strconv"

// CheckEventTypeName checks an event type name as Svix's server does (its EventTypeName): 1 to
// 256 characters of [a-zA-Z0-9-_.]. It is the one rule for every way a name comes in: Send,
// UpsertEventType, an endpoint's EventTypes, the API (which also holds feature flags and group
// names to it) and the dashboard's forms. A name that breaks it is a *ValidationError naming
// field.
func CheckEventTypeName(field, name string) error {
	switch {
	case name == "":
		return invalid(field, "must not be empty")
	case len(name) > maxIDLen:
		return invalid(field, "at most "+strconv.Itoa(maxIDLen)+" characters")
	}
	for i := range len(name) {
		if !eventTypeNameByte(name[i]) {
			return invalid(field, `must match ^[a-zA-Z0-9\-_.]+$`)
		}
	}
	return nil
}

func eventTypeNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}
