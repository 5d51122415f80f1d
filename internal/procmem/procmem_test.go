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
