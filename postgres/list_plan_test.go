package postgres_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore/listshape"
	"github.com/hookd/hookd/postgres"
)

// TestListPlansOnAFilledDatabase fills a database of a realistic shape (package listshape:
// 20,000 messages over 30 days, most of them of one application), with the attempts of its first
// ten days recorded as before migration 17 (no event type), runs ANALYZE, and lists each case of
// the API, the dashboard and the portal through the store's reads, planned as the store plans
// them, for their arguments: every statement a list runs must reach its rows through the
// case's indexes (one of those named with |), never by a sequential scan of a hookd table (but
// the few rows of applications and endpoints) nor a sort of more than a thousand rows (but of
// one message's rows), and the page must be the rows the filter names.
func TestListPlansOnAFilledDatabase(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	shape := listshape.Make(20_000, time.Now())
	if err := shape.Fill(ctx, b.store); err != nil {
		t.Fatal(err)
	}
	untyped := hookd.AttemptIDFloor(shape.Now.Add(-listshape.Span + 10*24*time.Hour))
	if _, err := b.store.Pool().Exec(ctx, `UPDATE hookd_attempts SET event_type = NULL WHERE id < $1`, untyped); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Pool().Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	conn, plans := explainingConn(t, b)
	// As the store's connections plan: the lists' statements are planned per run, for their
	// arguments (see postgres's reader); no generic plan is forced.
	if _, err := conn.Exec(ctx, `RESET plan_cache_mode`); err != nil {
		t.Fatal(err)
	}
	reads := postgres.ReadsOn(conn)
	// A plan made for its arguments sorts only what it expects to be a few rows: the range of a
	// time bound near an end of the log, say.
	sort := regexp.MustCompile(`(?m)(?:^|->\s+)Sort\s+\(cost=[0-9.]+ rows=(\d+)`)
	const maxSorted = 1000
	// The tables of applications and endpoints are a few pages here.
	seqScan := regexp.MustCompile(`Seq Scan on (hookd_\w+)`)
	for _, c := range shape.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			plans() // drops the plans of earlier reads
			c.CheckPage(ctx, t, reads)
			text := plans()
			for _, m := range seqScan.FindAllStringSubmatch(text, -1) {
				if m[1] != "hookd_endpoints" && m[1] != "hookd_applications" {
					t.Errorf("a plan scans %s whole:\n%s", m[1], text)
				}
			}
			if !c.Sorts {
				for _, m := range sort.FindAllStringSubmatch(text, -1) {
					if n, _ := strconv.Atoi(m[1]); n > maxSorted {
						t.Errorf("a plan sorts %d rows:\n%s", n, text)
					}
				}
			}
			for _, index := range strings.Split(c.Postgres, ",") {
				if index != "" && !regexp.MustCompile(`(using|Scan on) (`+index+`)\b`).MatchString(text) {
					t.Errorf("no plan uses %s:\n%s", index, text)
				}
			}
		})
	}
}
