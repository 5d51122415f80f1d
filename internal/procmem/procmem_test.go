package procmem

import (
	"errors"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestParseVmHWM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status string
		want   int64
		ok     bool
	}{
		{"Name:\tpostgres\nVmPeak:\t  223464 kB\nVmHWM:\t   32768 kB\nVmRSS:\t 1 kB\n", 32768, true},
		{"Name:\tkthreadd\n", 0, false},
		{"VmHWM:\tlots kB\n", 0, false},
	}
	for _, tt := range tests {
		if got, ok := ParseVmHWM([]byte(tt.status)); got != tt.want || ok != tt.ok {
			t.Errorf("ParseVmHWM(%q) = %d, %v; want %d, %v", tt.status, got, ok, tt.want, tt.ok)
		}
	}
}

// A reset peak is at most the peak before it, and at least what is resident after it.
func TestResetPeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		if err := ResetPeak(); !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("ResetPeak on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		t.Skip("VmHWM is Linux's")
	}
	grow := make([]byte, 64<<20)
	for i := range grow {
		grow[i] = 1
	}
	before, err := PeakKiB(0)
	if err != nil {
		t.Fatal(err)
	}
	grow = nil
	debug.FreeOSMemory() // the 64 MiB go back to the kernel
	if err := ResetPeak(); err != nil {
		t.Fatal(err)
	}
	after, err := PeakKiB(0)
	if err != nil {
		t.Fatal(err)
	}
	if after >= before || before < 64<<10 {
		t.Errorf("peak %d KiB before the reset, %d KiB after; want it to drop from over 64 MiB", before, after)
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stat          string
		name          string
		own, children int64
		ok            bool
	}{
		{"2207 (postgres) S 1 2207 2207 0 -1 4194560 2950 1000 0 0 12 34 5 6 20 0 1 0 1744 225 2417 18446744073709551615\n", "postgres", 12 + 34, 5 + 6, true},
		{"9 (a (b) c) R 1 9 9 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5 6 7\n", "a (b) c", 3, 7, true},
		{"9 (redis-server) S 1 9 9 0 -1 0 0 0 0 0 1 2\n", "", 0, 0, false},
		{"9 redis-server S", "", 0, 0, false},
		{"9 (x) S 1 9 9 0 -1 0 0 0 0 0 1 two 3 4 20\n", "", 0, 0, false},
	} {
		name, own, children, ok := ParseStat([]byte(tc.stat))
		if name != tc.name || own != tc.own || children != tc.children || ok != tc.ok {
			t.Errorf("ParseStat(%q) = %q, %d, %d, %v; want %q, %d, %d, %v", tc.stat, name, own, children, ok, tc.name, tc.own, tc.children, tc.ok)
		}
	}
}
