package sqlite

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
	"github.com/hookd/hookd/internal/sqlstore/listshape"
)

// TestListPlansOnAFilledDatabase fills a database of a realistic shape (package listshape:
// 20,000 messages over 30 days, most of them of one application), with the attempts of its first
// ten days recorded as before migration 17 (no event type), and lists each case of the API, the
// dashboard and the portal through the store's reads, first without statistics (a database never
// analyzed) and then after ANALYZE: every statement a list runs
// (its page and the check for a page beyond) must reach its rows through the case's index, never
// by a scan of a whole table nor a sort, and the page must be the rows the filter names.
func TestListPlansOnAFilledDatabase(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTestStore(t)
	shape := listshape.Make(20_000, time.Now())
	if err := shape.Fill(ctx, s); err != nil {
		t.Fatal(err)
	}
	untyped := hookd.AttemptIDFloor(shape.Now.Add(-listshape.Span + 10*24*time.Hour))
	if _, err := s.db.ExecContext(ctx, `UPDATE hookd_attempts SET event_type = NULL WHERE id < ?`, untyped); err != nil {
		t.Fatal(err)
	}
	eq := &explainingQuerier{q: s.db}
	reads := sqlstore.NewReads(dialect, eq, &columns)
	// First as a database that was never analyzed plans, then with statistics.
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := s.db.ExecContext(ctx, `ANALYZE`); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range shape.Cases() {
			listCase(ctx, t, eq, &reads, c, analyzed)
		}
	}
}

// listCase lists c through reads, whose statements eq explains, and checks the page and plans.
func listCase(ctx context.Context, t *testing.T, eq *explainingQuerier, reads *sqlstore.Reads, c listshape.Case, analyzed bool) {
	t.Helper()
	t.Run(fmt.Sprintf("%s/analyzed=%v", c.Name, analyzed), func(t *testing.T) {
		eq.plans() // drops earlier plans
		c.CheckPage(ctx, t, reads)
		ps := eq.plans()
		for _, p := range ps {
			checkListPlan(t, p, c.Sorts)
		}
		for _, index := range strings.Split(c.SQLite, ",") {
			used := regexp.MustCompile(`(?m)USING (COVERING )?INDEX ` + regexp.QuoteMeta(index) + `( |$)`)
			if index == "PRIMARY KEY" {
				used = regexp.MustCompile(`USING PRIMARY KEY`)
			}
			if index != "" && !slices.ContainsFunc(ps, func(p listPlan) bool { return used.MatchString(p.plan) }) {
				t.Errorf("no statement uses %s:\n%v", index, ps)
			}
		}
	})
}

// checkListPlan fails t when the plan of one statement scans a table whole or sorts: beyond the
// page of each of a list's branches, which SQLite sorts to merge them (each branch walks its
// index in order, at most a page of rows), and, where sorts is set, beyond what one index range
// holds.
func checkListPlan(t *testing.T, p listPlan, sorts bool) {
	t.Helper()
	lines := strings.Split(p.plan, "\n")
	for i, line := range lines {
		scans := strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, " INDEX ") && !strings.Contains(line, "json_each") &&
			!strings.HasPrefix(line, "SCAN (subquery")
		branchPage := i > 0 && strings.HasPrefix(lines[i-1], "SCAN (subquery")
		if scans || strings.Contains(line, "TEMP B-TREE") && !branchPage && !sorts {
			t.Errorf("the plan has %q:\n%s\n%s", line, p.query, p.plan)
		}
	}
}

type listPlan struct{ query, plan string }

// explainingQuerier runs the reads' statements on q, and keeps the plan of each.
type explainingQuerier struct {
	q  querier
	mu sync.Mutex
	ps []listPlan
}

func (e *explainingQuerier) explain(ctx context.Context, query string, args []any) {
	plan, err := explainPlan(ctx, e.q, query, args)
	if err != nil {
		plan = "EXPLAIN failed: " + err.Error()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ps = append(e.ps, listPlan{query, plan})
}

func (e *explainingQuerier) plans() []listPlan {
	e.mu.Lock()
	defer e.mu.Unlock()
	ps := e.ps
	e.ps = nil
	return ps
}

func (e *explainingQuerier) Query(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error {
	e.explain(ctx, query, args)
	return sqlQuerier{e.q}.Query(ctx, query, args, each)
}

func (e *explainingQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Scanner {
	e.explain(ctx, query, args)
	return sqlQuerier{e.q}.QueryRow(ctx, query, args...)
}

// explainPlan returns the query plan of query, one step a line.
func explainPlan(ctx context.Context, q querier, query string, args []any) (string, error) {
	rows, err := q.QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n"), rows.Err()
}
