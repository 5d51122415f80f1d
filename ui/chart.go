package ui

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// chart draws attempts per hour by outcome over the window that ends at now, as an inline SVG:
// one stacked bar an hour, successes below, failures above, and a title on each bar with its
// counts. It is built from numbers only, so its markup is safe.
func chart(hours []hookd.HourCount, now time.Time, span time.Duration) template.HTML {
	const (
		barW, gap, height, top, axis = 14, 2, 120, 8, 18
	)
	n := int(span / time.Hour)
	start := now.UTC().Truncate(time.Hour).Add(-time.Duration(n-1) * time.Hour)
	ok, failed := make([]int, n), make([]int, n)
	peak := 0
	for _, c := range hours {
		i := int(c.Hour.Sub(start) / time.Hour)
		if i < 0 || i >= n {
			continue
		}
		ok[i], failed[i] = c.Succeeded, c.Failed
		peak = max(peak, c.Succeeded+c.Failed)
	}
	width := n*(barW+gap) + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="attempts per hour, last %d hours">`, width, height+top+axis, n)
	fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d">%d</text>`, n*(barW+gap)+4, top+8, peak)
	fmt.Fprintf(&b, `<line class="base" x1="0" y1="%d" x2="%d" y2="%d"/>`, top+height, n*(barW+gap), top+height)
	scale := 0.0
	if peak > 0 {
		scale = float64(height) / float64(peak)
	}
	for i := range n {
		x := i * (barW + gap)
		hOK := int(math.Round(float64(ok[i]) * scale))
		hFail := int(math.Round(float64(failed[i]) * scale))
		at := start.Add(time.Duration(i) * time.Hour)
		fmt.Fprintf(&b, `<g><title>%s UTC: %d succeeded, %d failed</title>`, at.Format("Jan 2 15:00"), ok[i], failed[i])
		fmt.Fprintf(&b, `<rect class="hit" x="%d" y="%d" width="%d" height="%d"/>`, x, top, barW, height)
		if hOK > 0 {
			fmt.Fprintf(&b, `<rect class="ok" x="%d" y="%d" width="%d" height="%d"/>`, x, top+height-hOK, barW, hOK)
		}
		if hFail > 0 {
			fmt.Fprintf(&b, `<rect class="fail" x="%d" y="%d" width="%d" height="%d"/>`, x, top+height-hOK-hFail, barW, hFail)
		}
		b.WriteString(`</g>`)
		if at.Hour()%6 == 0 {
			fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d">%02d:00</text>`, x, top+height+axis-4, at.Hour())
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // numbers and fixed text only
}
