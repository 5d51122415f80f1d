// Package procmem reads what a process has used from Linux's /proc: its peak resident memory,
// the VmHWM line of /proc/<pid>/status, which ResetPeak sets back to the current resident set
// (elsewhere both return an error that wraps errors.ErrUnsupported), and its CPU time, from
// /proc/<pid>/stat (CPU, ParseStat).
package procmem

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// ResetPeak sets this process's peak resident set back to its current resident set ("5" to
// /proc/self/clear_refs), so that a later PeakKiB(0) is the peak since now.
func ResetPeak() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("reset the peak resident set: %w on %s", errors.ErrUnsupported, runtime.GOOS)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak resident set: %w", err)
	}
	return nil
}

// PeakKiB returns the peak resident set of process pid, or of this process when pid is 0, in
// KiB: since the process started or since its last ResetPeak.
func PeakKiB(pid int) (int64, error) {
	if runtime.GOOS != "linux" {
		return 0, fmt.Errorf("read the peak resident set: %w on %s", errors.ErrUnsupported, runtime.GOOS)
	}
	path := "/proc/self/status"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	status, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read the peak resident set: %w", err)
	}
	kib, ok := ParseVmHWM(status)
	if !ok {
		return 0, fmt.Errorf("read the peak resident set: %s has no VmHWM line", path)
	}
	return kib, nil
}

// ParseVmHWM returns the VmHWM of a /proc/<pid>/status in KiB; false without one (a kernel
// thread) or when it does not parse.
func ParseVmHWM(status []byte) (kib int64, ok bool) {
	for line := range strings.Lines(string(status)) {
		v, found := strings.CutPrefix(line, "VmHWM:")
		if !found {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n, err == nil
	}
	return 0, false
}
