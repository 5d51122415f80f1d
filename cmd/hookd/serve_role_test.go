package main

import (
	"strings"
	"testing"
)

// TestServeSplitRoleNeedsPostgres: --role api or worker on SQLite is a usage error that points
// at PostgreSQL, as the flag or from HOOKD_ROLE; on PostgreSQL both are accepted.
func TestServeSplitRoleNeedsPostgres(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + t.TempDir() + "/hookd.db"
	for _, role := range []string{roleAPI, roleWorker} {
		env := map[string]string{"HOOKD_ROLE": role}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		if _, err := parseServeConfig(quietEnv(), []string{"--db", db}, lookup); err == nil || !strings.Contains(err.Error(), "split roles need PostgreSQL") {
			t.Fatalf("HOOKD_ROLE=%s on SQLite: %v", role, err) // else serve below would run
		}
		r := run(t, "", "serve", "--listen", "127.0.0.1:0", "--db", db, "--role", role)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--role "+role+": split roles need PostgreSQL") || !strings.Contains(r.stderr, "use --db postgres://") {
			t.Errorf("--role %s on SQLite: exit %d, stderr %q", role, r.code, r.stderr)
		}
		c, err := parseServeConfig(quietEnv(), []string{"--db", "postgres://hookd@db:5432/hookd", "--role", role}, func(string) (string, bool) { return "", false })
		if err != nil || c.role != role {
			t.Errorf("--role %s on PostgreSQL: %v", role, err)
		}
	}
	if c, err := parseServeConfig(quietEnv(), []string{"--db", db}, func(string) (string, bool) { return "", false }); err != nil || c.role != roleAll {
		t.Errorf("the default role on SQLite: %v", err)
	}
}
