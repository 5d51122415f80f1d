package procmem

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 per second on Linux
// whatever the kernel's own tick.
const clockTicks = 100

// Ticks converts CPU time in /proc/<pid>/stat's clock ticks to a duration.
func Ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// ParseStat reads a /proc/<pid>/stat line: the process's name (comm), its own CPU time
// (utime + stime) and that of its children that ended and were waited for (cutime + cstime),
// in clock ticks (see Ticks).
func ParseStat(stat []byte) (name string, own, children int64, ok bool) {
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses, and ends at the last ')'.
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state); utime, stime, cutime and cstime are fields 14 to 17.
	if len(fields) < 15 {
		return "", 0, 0, false
	}
	var ticks [4]int64
	for i, f := range fields[11:15] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return "", 0, 0, false
		}
		ticks[i] = n
	}
	return string(stat[open+1 : end]), ticks[0] + ticks[1], ticks[2] + ticks[3], true
}

// CPU returns the CPU time (user + system) process pid has used so far, without its children,
// from /proc/<pid>/stat.
func CPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	_, own, _, ok := ParseStat(stat)
	if !ok {
		return 0, fmt.Errorf("read the CPU time of process %d: /proc/%d/stat does not parse", pid, pid)
	}
	return Ticks(own), nil
}
