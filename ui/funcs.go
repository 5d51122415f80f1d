package ui

import (
	"fmt"
	"html/template"
	"net/url"
	"time"
)

var funcs = template.FuncMap{
	"path": url.PathEscape,
	"ts": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *time.Time:
			if v == nil || v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return "—"
	},
	"ms": func(d time.Duration) string {
		if d < time.Second {
			return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
		}
		return fmt.Sprintf("%.2f s", d.Seconds())
	},
	"pct": func(f float64) string { return fmt.Sprintf("%.1f %%", f) },
	"trunc": func(n int, s string) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n]) + "…"
	},
	// plural is n and noun, with an "s" unless n is 1: "1 attempt", "3 attempts".
	"plural": func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", n, noun)
	},
	"has": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
}
