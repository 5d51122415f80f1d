package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		`receiver: verified invitation.created {"invitationId":"inv_1","organizationId":"org_acme","email":"ada@example.com"`,
		"bus: iam.user.registered names no organization: skipped, no webhook sent",
		"done: 1 webhook delivered and verified",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
}
