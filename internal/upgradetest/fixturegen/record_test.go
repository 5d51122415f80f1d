package main

import (
	"testing"

	"github.com/hookd/hookd/internal/upgradetest"
)

func TestDeliveryState(t *testing.T) {
	t.Parallel()
	ok := attempt{ResponseStatusCode: 200}
	failed := attempt{ResponseStatusCode: 500}
	refused := attempt{ResponseStatusCode: 0}
	for _, c := range []struct {
		role     string
		head     bool
		attempts []attempt
		want     string // "" when the attempts do not fit the role
	}{
		{role: upgradetest.RoleOK, attempts: []attempt{ok}, want: upgradetest.Delivered},
		{role: upgradetest.RoleOK, attempts: nil},
		{role: upgradetest.RoleOK, attempts: []attempt{failed, ok}},
		{role: upgradetest.RoleDead, attempts: []attempt{failed, failed, refused}, want: upgradetest.Failed},
		{role: upgradetest.RoleDead, attempts: []attempt{failed}},
		{role: upgradetest.RoleDead, attempts: []attempt{failed, ok}},
		{role: upgradetest.RoleDown, attempts: []attempt{failed}, want: upgradetest.Pending},
		{role: upgradetest.RoleDown, attempts: []attempt{failed, failed}}, // the retry came: the second server ran too long
		{role: upgradetest.RoleDown, attempts: nil},
		{role: upgradetest.RoleOrdered, head: true, attempts: []attempt{failed}, want: upgradetest.Pending},
		{role: upgradetest.RoleOrdered, head: false, attempts: nil, want: upgradetest.Pending},
		{role: upgradetest.RoleOrdered, head: false, attempts: []attempt{failed}}, // not held behind the head
		{role: upgradetest.RoleHang, attempts: nil, want: upgradetest.Pending},
		{role: upgradetest.RoleHang, attempts: []attempt{refused}},
		{role: upgradetest.RoleQueued, attempts: nil, want: upgradetest.Pending},
		{role: "unknown", attempts: nil},
	} {
		got, err := deliveryState(&endpoint{role: c.role}, c.attempts, c.head)
		if c.want == "" {
			if err == nil {
				t.Errorf("role %s, head %v, %d attempts: state %q, want an error", c.role, c.head, len(c.attempts), got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("role %s, head %v, %d attempts: %q, %v; want %q", c.role, c.head, len(c.attempts), got, err, c.want)
		}
	}
}
