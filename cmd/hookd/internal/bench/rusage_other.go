//go:build !unix

package bench

import "time"

// selfUsage reports no figures: getrusage is Unix's.
func selfUsage() (cpu time.Duration, maxRSSKiB int64, ok bool) { return 0, 0, false }
