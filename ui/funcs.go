package ui

import (
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"time"

	"github.com/hookd/hookd"
)

// said is the funcs' "said".
func said(status int, err string) string {
	switch {
	case (&hookd.Attempt{Error: err}).NotSent():
		return "not sent: endpoint paused after repeated failures"
	case err != "":
		return err
	case status != 0:
		return "HTTP " + strconv.Itoa(status)
	}
	return "no response"
}

var funcs = template.FuncMap{
	// said is an attempt's or a delivery's outcome in a customer's words: the error, once (an
	// error "HTTP 500" is not said twice), or the status; a try not sent while the endpoint was
	// paused says so.
	"said": said,
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
	// schedule and timeout write an endpoint's retry policy as the edit form takes it: Go
	// durations, "none" for no retries, "" when it inherits.
	"schedule": formSchedule,
	"timeout": func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return d.String()
	},
	// hm is a time of day, "14:05 UTC", with the date when it is not today (UTC).
	"hm": func(t time.Time) string {
		t = t.UTC()
		if y, m, d := t.Date(); y == time.Now().UTC().Year() && m == time.Now().UTC().Month() && d == time.Now().UTC().Day() {
			return t.Format("15:04 UTC")
		}
		return t.Format("Jan 2 15:04 UTC")
	},
	"future": func(t time.Time) bool { return t.After(time.Now()) },
	"pct":    func(f float64) string { return fmt.Sprintf("%.1f %%", f) },
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
