package hookd_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/hookd/hookd"
)

// TestUpsertEventTypeFlags: FeatureFlag alone is a list of one flag, FeatureFlag is read back as
// the first of FeatureFlags, and the two may not disagree; group and deprecation are kept.
func TestUpsertEventTypeFlags(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	got, err := b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "one.flag", FeatureFlag: "beta"})
	if err != nil || got.FeatureFlag != "beta" || !slices.Equal(got.FeatureFlags, []string{"beta"}) {
		t.Fatalf("one flag: %+v, %v", got, err)
	}
	got, err = b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "two.flags", FeatureFlags: []string{"b", "a"},
		GroupName: "billing", Deprecated: true})
	if err != nil || got.FeatureFlag != "b" || !slices.Equal(got.FeatureFlags, []string{"b", "a"}) ||
		got.GroupName != "billing" || !got.Deprecated {
		t.Fatalf("two flags: %+v, %v", got, err)
	}
	for _, c := range []struct {
		name  string
		et    hookd.EventType
		field string
	}{
		{"flags disagree", hookd.EventType{Name: "x", FeatureFlag: "a", FeatureFlags: []string{"b", "a"}}, "featureFlag"},
		{"an empty flag", hookd.EventType{Name: "x", FeatureFlags: []string{"a", ""}}, "featureFlags"},
		{"a NUL in a flag", hookd.EventType{Name: "x", FeatureFlags: []string{"a\x00"}}, "featureFlags"},
		{"a NUL in the group", hookd.EventType{Name: "x", GroupName: "g\x00"}, "groupName"},
	} {
		_, err := b.client.UpsertEventType(b.ctx, &c.et)
		checkInvalid(t, c.name, err, c.field)
	}
	if _, err := b.client.GetEventType(b.ctx, "x"); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("refused event type stored: %v", err)
	}
}
