package main

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
)

// Kinds of what a manifest records, for changedFields.
const (
	kindEventType   = "event type"
	kindApplication = "application"
	kindEndpoint    = "endpoint"
	kindHeaders     = "endpoint headers"
	kindMessage     = "message"
	kindAttempt     = "attempt"
)

// changedFields are the fields an earlier build answered that the binary under test answers
// otherwise, legitimately, by kind, each with why. Any other field the earlier build answered
// must read back the same. Every build from 712c5db on answers today's shapes, so none is
// listed: a field added here needs its reason.
var changedFields = map[string]map[string]string{}

// compareRecorded checks that got has every field of recorded, the earlier build's answer, with
// the same value, but for the fields changedFields names for kind.
func compareRecorded(t *testing.T, what, kind string, recorded, got json.RawMessage) {
	t.Helper()
	var old, now map[string]json.RawMessage
	if err := json.Unmarshal(recorded, &old); err != nil {
		t.Fatalf("%s: the manifest's record: %v", what, err)
	}
	if err := json.Unmarshal(got, &now); err != nil {
		t.Fatalf("%s after the upgrade: %v in %s", what, err, got)
	}
	names := make([]string, 0, len(old))
	for name := range old {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, changed := changedFields[kind][name]; changed {
			continue
		}
		v, ok := now[name]
		switch {
		case !ok:
			t.Errorf("%s: field %q, which the earlier build answered (%s), is gone after the upgrade", what, name, old[name])
		case !sameJSON(old[name], v):
			t.Errorf("%s: field %q is %s after the upgrade, the earlier build answered %s", what, name, v, old[name])
		}
	}
}

// sameJSON reports whether a and b encode the same value (objects compared without regard to the
// order of their keys).
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}
