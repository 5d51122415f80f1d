package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// This file prints the client commands' answers: JSON, tables, fields, and lists fetched page
// by page up to --limit.

// printJSON writes v as indented JSON.
func (c *conn) printJSON(v any) error {
	enc := json.NewEncoder(c.e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return failf("", "write JSON: %v", err)
	}
	return nil
}

// printTable writes rows under header, aligned in columns.
func (c *conn) printTable(header []string, rows [][]string) {
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// printFields writes name/value pairs, one a line, values aligned.
func (c *conn) printFields(pairs ...[2]string) {
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s:\t%s\n", p[0], p[1])
	}
	tw.Flush()
}

// noteMore tells (on stderr, so that --json stays clean) that a list was cut at limit.
func (c *conn) noteMore(more bool, limit int) {
	if more {
		fmt.Fprintf(c.e.stderr, "(showing the first %d; there may be more: pass --limit)\n", limit)
	}
}

// page is one page of a Svix list.
type page[T any] struct {
	data     []T
	done     bool
	iterator *string
}

// printList fetches up to limit items with fetch and prints them: JSON with --json, else a table
// of header and one row per item; a list cut at the limit is noted on stderr. what names the list
// in an error ("applications"); t is what the list's route addresses.
func printList[T any](ctx context.Context, c *conn, what string, t target, limit int, fetch func(iterator *string, n int32) (page[T], error), header []string, row func(*T) []string) error {
	items, more, err := collect(limit, fetch)
	if err != nil {
		return c.failAt(ctx, "list "+what, t, err)
	}
	c.noteMore(more, limit)
	if c.json {
		return c.printJSON(items)
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		rows = append(rows, row(&items[i]))
	}
	c.printTable(header, rows)
	return nil
}

// collect fetches pages until limit items or the end; more reports that the list was cut.
func collect[T any](limit int, fetch func(iterator *string, n int32) (page[T], error)) (items []T, more bool, err error) {
	var iter *string
	for {
		n := min(limit-len(items), maxPageSize)
		p, err := fetch(iter, int32(n))
		if err != nil {
			return nil, false, err
		}
		items = append(items, p.data...)
		last := p.done || p.iterator == nil || *p.iterator == "" || len(p.data) == 0 ||
			(iter != nil && *p.iterator == *iter)
		if len(items) >= limit {
			return items[:limit], !last || len(items) > limit, nil
		}
		if last {
			return items, false, nil
		}
		iter = p.iterator
	}
}

// formatTime prints t in UTC, to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// yesNo writes a setting that is on or off.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
