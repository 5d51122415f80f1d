//go:build unix

package bench

import (
	"runtime"
	"syscall"
	"time"
)

// selfUsage returns this process's CPU time (user + system) and its peak resident set in KiB,
// from getrusage(RUSAGE_SELF).
func selfUsage() (cpu time.Duration, maxRSSKiB int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	maxRSSKiB = int64(ru.Maxrss) // KiB on Linux and the BSDs
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		maxRSSKiB /= 1024 // bytes there
	}
	return cpu, maxRSSKiB, true
}
