package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd/internal/procmem"
)

// This file holds the whole machine's CPU time from /proc/stat, and how B1 splits it between the
// processes it knows: hookd's, the database's and the queue's, the receiver, the senders, the
// bench itself and the rest.

// machineBusy returns the CPU time every CPU of the machine spent on anything but idling or
// waiting for I/O since boot: /proc/stat's first line, user + nice + system + irq + softirq +
// steal (guest and guest_nice are inside user and nice already). ok is false without /proc.
func machineBusy() (time.Duration, bool) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	return parseProcStat(stat)
}

// parseProcStat reads the busy time of /proc/stat's "cpu" line; see machineBusy.
func parseProcStat(stat []byte) (time.Duration, bool) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	fields := strings.Fields(string(line))
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, f := range fields[1:9] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return procmem.Ticks(busy), true
}

// machineUsage is the whole machine's CPU time in B1 and how it splits.
type machineUsage struct {
	// CPUSeconds is every CPU's time but idle and I/O wait (/proc/stat), from just before the
	// first send until the store settled.
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerDeliveryUs float64 `json:"cpuPerDeliveryUs"`
	// Shares split CPUSeconds: hookd's processes outside the bench, each server's processes
	// (postgres, redis-server), the bench's receiver and sender children, the bench's own
	// process (which runs hookd, the receiver and the producers where they are not apart), and
	// other, the rest of the machine (other work on it; a few clock ticks below 0 when the
	// processes' and the machine's counters, each read to the tick, disagree). They add up to
	// CPUSeconds.
	Shares []cpuShare `json:"shares"`
	// RunCPUPerDeliveryUs is CPUPerDeliveryUs without other: what the run's processes took.
	RunCPUPerDeliveryUs float64 `json:"runCpuPerDeliveryUs"`
}

// cpuShare is one part of the machine's CPU time in B1.
type cpuShare struct {
	Name             string  `json:"name"` // hookd, postgres, redis-server, receiver, sender, bench, other
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerDeliveryUs float64 `json:"cpuPerDeliveryUs"`
	Percent          float64 `json:"percent"` // of the machine's CPUSeconds
}

// The names of the shares that are not a server's.
const (
	shareHookd    = "hookd"
	shareReceiver = "receiver"
	shareSender   = "sender"
	shareBench    = "bench"
	shareOther    = "other"
)

// newMachineUsage splits machine, the machine's busy time over deliveries, into parts (in their
// order, zero ones kept) and other, the rest.
func newMachineUsage(machine time.Duration, deliveries int, parts []namedCPU) *machineUsage {
	perDelivery := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(deliveries) }
	percent := func(d time.Duration) float64 {
		if machine <= 0 {
			return 0
		}
		return 100 * d.Seconds() / machine.Seconds()
	}
	m := &machineUsage{CPUSeconds: machine.Seconds(), CPUPerDeliveryUs: perDelivery(machine)}
	rest := machine
	for _, p := range parts {
		rest -= p.cpu
		m.Shares = append(m.Shares, cpuShare{Name: p.name, CPUSeconds: p.cpu.Seconds(), CPUPerDeliveryUs: perDelivery(p.cpu), Percent: percent(p.cpu)})
	}
	m.Shares = append(m.Shares, cpuShare{Name: shareOther, CPUSeconds: rest.Seconds(), CPUPerDeliveryUs: perDelivery(rest), Percent: percent(rest)})
	m.RunCPUPerDeliveryUs = perDelivery(machine - rest)
	return m
}

// namedCPU is one part of the machine's CPU time before it is a share.
type namedCPU struct {
	name string
	cpu  time.Duration
}

// shareCell formats a share for the text: "142 µs (37%)".
func shareCell(s cpuShare) string {
	return fmt.Sprintf("%s (%.0f%%)", cpuMicros(s.CPUPerDeliveryUs), s.Percent)
}
