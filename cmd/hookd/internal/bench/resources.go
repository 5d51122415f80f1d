package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/hookd/hookd/internal/procmem"
)

// This file holds what B1 reports beside its speed: the CPU time and the peak memory of this
// process, of hookd's processes when they run outside it, of the receiver and sender children
// (--apart), of the database's and the queue's processes, and of the whole machine.

// usageSample is what sampleUsage read at one instant.
type usageSample struct {
	self       bool          // this process's figures were read (getrusage)
	selfCPU    time.Duration // user + system
	selfMaxRSS int64         // KiB
	// peakReset is set when this process's peak RSS was reset just before the sample, so that a
	// later sample's selfMaxRSS is the peak since then.
	peakReset bool
	asked     []string // the server names asked for
	// servers holds the processes of each name asked for; nil where /proc is missing.
	servers map[string]serverSample
	// runServer names the server whose processes serving this run runPIDs lists, when the
	// target can tell them apart from the server's others (see runBackendLister).
	runServer string
	runPIDs   []int
	// sharedPIDs are runServer's own processes, which serve every client (PostgreSQL's WAL
	// writer, checkpointer, background writer, autovacuum).
	sharedPIDs []int
	// processes holds the target's hookd processes (see processLister), in its order, then
	// the receiver and sender children of --apart.
	processes []processSample
	// machineFirst and machineLast are the machine's busy CPU time (machineBusy) read first and
	// last in the sample, so that the machine's interval from one sample to the next holds every
	// process's.
	machineFirst, machineLast time.Duration
	machineOK                 bool
}

// processLister is a target whose hookd runs in processes of its own, outside this one: the
// fleet target's children. B1 reports each one's CPU time and peak memory.
type processLister interface {
	// processes returns the processes of the run that is open, each named for what it runs.
	processes() []benchProcess
}

// benchProcess is one process outside this one whose CPU time B1 reports.
type benchProcess struct {
	name string // "hookd api", "hookd worker 1", "bench receiver"
	pid  int
	// share is the share of the machine's CPU time it counts in: shareHookd, shareReceiver or
	// shareSender.
	share string
}

// processSample is what sampleUsage read of one benchProcess.
type processSample struct {
	benchProcess
	ok     bool          // its /proc/<pid>/stat was read
	cpu    time.Duration // its own user and system time
	hwmKiB int64         // its VmHWM; 0: unread
}

// serverSample sums the processes of one name.
type serverSample struct {
	processes int
	// cpu is the user and system time of every process of the name, and of their children that
	// exited and were waited for (PostgreSQL's ended backends, counted in the postmaster).
	cpu       time.Duration
	maxHWMKiB int64 // the largest VmHWM among them
	// byPID holds each process's own user and system time, its children's left out.
	byPID map[int]time.Duration
}

// runBackendLister is a target that can tell which of its server's processes serve this run:
// the PostgreSQL targets, whose connections carry an application_name of their own.
type runBackendLister interface {
	// runBackends returns the server's name, the pids of its processes that serve this run, and
	// those of its own processes, which serve every client; false when they cannot be listed.
	runBackends(ctx context.Context) (server string, run, shared []int, ok bool)
}

// sampleUsage reads the CPU time and peak memory of this process, of t's hookd processes and
// the apart ones (the receiver and sender children), and of every process named one of t's
// servers, and which of those serve this run when t can tell, and the machine's busy CPU time.
// With resetPeak it first resets this process's peak RSS (Linux: 5 to /proc/self/clear_refs), so
// that a later sample reports the peak since this one.
func sampleUsage(ctx context.Context, t benchTarget, resetPeak bool, apart []benchProcess) usageSample {
	var s usageSample
	if resetPeak {
		s.peakReset = procmem.ResetPeak() == nil
	}
	s.machineFirst, s.machineOK = machineBusy()
	s.selfCPU, s.selfMaxRSS, s.self = selfUsage()
	var procs []benchProcess
	if l, ok := t.(processLister); ok {
		procs = l.processes()
	}
	for _, p := range append(procs, apart...) {
		s.processes = append(s.processes, readProcess(p))
	}
	s.asked = t.servers()
	if len(s.asked) > 0 {
		s.servers = readServers(s.asked)
		if l, ok := t.(runBackendLister); ok && s.servers != nil {
			if name, run, shared, ok := l.runBackends(ctx); ok {
				s.runServer, s.runPIDs, s.sharedPIDs = name, run, shared
			}
		}
	}
	// Last, so that the machine's interval holds every process's.
	var ok bool
	s.machineLast, ok = machineBusy()
	s.machineOK = s.machineOK && ok
	return s
}

// readServers sums, by name, the processes in /proc named one of names, or returns nil when
// /proc cannot be listed. A process that ends while it is read is left out.
func readServers(names []string) map[string]serverSample {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil || len(dirs) == 0 {
		return nil
	}
	out := make(map[string]serverSample, len(names))
	for _, name := range names {
		out[name] = serverSample{}
	}
	for _, dir := range dirs {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		name, own, children, ok := procmem.ParseStat(stat)
		sum, wanted := out[name]
		if !ok || !wanted {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		if sum.byPID == nil {
			sum.byPID = map[int]time.Duration{}
		}
		sum.processes++
		sum.byPID[pid] = procmem.Ticks(own)
		sum.cpu += procmem.Ticks(own + children)
		if kib, err := procmem.PeakKiB(pid); err == nil {
			sum.maxHWMKiB = max(sum.maxHWMKiB, kib)
		}
		out[name] = sum
	}
	return out
}

// readProcess reads the CPU time and the peak memory of p; ok is false when /proc lacks it.
func readProcess(p benchProcess) processSample {
	s := processSample{benchProcess: p}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "stat"))
	if err != nil {
		return s
	}
	var own int64
	_, own, _, s.ok = procmem.ParseStat(stat)
	s.cpu = procmem.Ticks(own)
	if kib, err := procmem.PeakKiB(p.pid); err == nil {
		s.hwmKiB = kib
	}
	return s
}

// b1Resources is what B1 cost, from just before its first send until the store settled,
// divided by its deliveries.
type b1Resources struct {
	// ProcessCPUSeconds is this process's user and system time (getrusage). The process runs
	// hookd (but for the fleet target) and also the receiver, the producers and, for the api
	// target, the HTTP server.
	ProcessCPUSeconds       float64 `json:"processCpuSeconds"`
	ProcessCPUPerDeliveryUs float64 `json:"processCpuPerDeliveryUs"`
	// ProcessMaxRSSKiB is this process's peak resident set (getrusage's maxrss), during B1: the
	// peak is reset before it. ProcessMaxRSSSinceStart says the reset failed (no /proc): then it
	// is the peak since the bench started.
	ProcessMaxRSSKiB        int64 `json:"processMaxRssKiB"`
	ProcessMaxRSSSinceStart bool  `json:"processMaxRssSinceStart,omitempty"`
	// Hookd are the target's hookd processes outside this process (fleet: the API process and
	// the workers); absent where hookd runs in this process.
	Hookd []processUsage `json:"hookd,omitempty"`
	// Apart are the receiver and sender children of --apart, "bench receiver" and "bench
	// sender"; absent where they run in this process.
	Apart []processUsage `json:"apart,omitempty"`
	// Servers are the target's database and queue processes on this machine, by name; absent
	// for SQLite (in this process), where /proc is missing, and for a name no process has.
	Servers []serverUsage `json:"servers,omitempty"`
	// TotalCPUPerDeliveryUs adds the hookd, apart and server processes' CPU to this process's;
	// absent when one of them could not be read.
	TotalCPUPerDeliveryUs *float64 `json:"totalCpuPerDeliveryUs,omitempty"`
	// Machine is the whole machine's CPU time and its split between those processes and the
	// rest; absent without /proc/stat, or when a process of the target could not be read.
	Machine *machineUsage `json:"machine,omitempty"`
}

// serverUsage is what the processes of one name cost in B1.
type serverUsage struct {
	Name      string `json:"name"`      // the process name: postgres or redis-server
	Processes int    `json:"processes"` // of that name, at the end of B1
	// CPUSeconds is their user and system time (/proc/<pid>/stat), with that of their children
	// that ended during B1.
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerDeliveryUs float64 `json:"cpuPerDeliveryUs"`
	// MaxVmHWMKiB is the largest peak resident set (VmHWM) among them, each since it started;
	// a PostgreSQL process's counts the shared buffers it touched.
	MaxVmHWMKiB int64 `json:"maxVmHwmKiB"`
	// Run counts only the processes that served this run (PostgreSQL: the backends of its own
	// connections), leaving out the server's shared processes and other clients' backends;
	// absent where they cannot be told apart (Redis).
	Run *runProcessUsage `json:"run,omitempty"`
	// Shared counts the server's own processes, which serve every client (PostgreSQL's WAL
	// writer, checkpointer, background writer, autovacuum workers alive at both ends); absent
	// with Run.
	Shared *runProcessUsage `json:"shared,omitempty"`
}

// processUsage is what one process outside this process (hookd's, the receiver, the sender)
// cost in B1.
type processUsage struct {
	Name string `json:"name"` // what it runs: "hookd api", "hookd worker 1", "bench receiver"
	PID  int    `json:"pid"`
	// CPUSeconds is its own user and system time (/proc/<pid>/stat).
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerDeliveryUs float64 `json:"cpuPerDeliveryUs"`
	MaxVmHWMKiB      int64   `json:"maxVmHwmKiB"` // its peak resident set since it started
}

// runProcessUsage is what the processes of a server that served a run cost in B1.
type runProcessUsage struct {
	Processes        int     `json:"processes"`
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUPerDeliveryUs float64 `json:"cpuPerDeliveryUs"`
}

// since returns the cost from before to s over deliveries, or nil when this process's figures
// could not be read.
func (s usageSample) since(before usageSample, deliveries int) *b1Resources {
	if !s.self || !before.self || deliveries <= 0 {
		return nil
	}
	perDelivery := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(deliveries) }
	total := s.selfCPU - before.selfCPU
	r := &b1Resources{
		ProcessCPUSeconds: total.Seconds(), ProcessCPUPerDeliveryUs: perDelivery(total),
		ProcessMaxRSSKiB: s.selfMaxRSS, ProcessMaxRSSSinceStart: !before.peakReset,
	}
	complete := true
	shares := map[string]time.Duration{}
	for _, a := range s.processes {
		i := slices.IndexFunc(before.processes, func(b processSample) bool { return b.pid == a.pid })
		if !a.ok || i < 0 || !before.processes[i].ok {
			complete = false // no /proc, or a process that was not there at B1's start
			continue
		}
		cpu := max(a.cpu-before.processes[i].cpu, 0)
		total += cpu
		shares[a.share] += cpu
		u := processUsage{Name: a.name, PID: a.pid, CPUSeconds: cpu.Seconds(), CPUPerDeliveryUs: perDelivery(cpu), MaxVmHWMKiB: a.hwmKiB}
		if a.share == shareHookd {
			r.Hookd = append(r.Hookd, u)
		} else {
			r.Apart = append(r.Apart, u)
		}
	}
	var parts []namedCPU
	if _, ok := shares[shareHookd]; ok {
		parts = append(parts, namedCPU{shareHookd, shares[shareHookd]})
	}
	for _, name := range before.asked {
		b, okb := before.servers[name]
		a, oka := s.servers[name]
		if !okb || !oka || a.processes == 0 || b.processes == 0 {
			complete = false // no /proc, or no such process on this machine
			continue
		}
		cpu := max(a.cpu-b.cpu, 0)
		total += cpu
		u := serverUsage{
			Name: name, Processes: a.processes, CPUSeconds: cpu.Seconds(), CPUPerDeliveryUs: perDelivery(cpu),
			MaxVmHWMKiB: a.maxHWMKiB,
		}
		// The machine's share of a server is the whole of its processes, or, where the run's
		// can be told apart, theirs and the server's own: other clients' backends (other work
		// on a shared server) then count in other.
		share := cpu
		if name == s.runServer && name == before.runServer {
			// The processes at either end, from their CPU time at the start (or 0, started
			// since) to the end; one that ended meanwhile is lost.
			sum := func(pids ...[]int) (*runProcessUsage, time.Duration) {
				var d time.Duration
				n := 0
				for _, pid := range slices.Compact(slices.Sorted(slices.Values(slices.Concat(pids...)))) {
					if end, ok := a.byPID[pid]; ok {
						d += max(end-b.byPID[pid], 0)
						n++
					}
				}
				return &runProcessUsage{Processes: n, CPUSeconds: d.Seconds(), CPUPerDeliveryUs: perDelivery(d)}, d
			}
			var run, shared time.Duration
			u.Run, run = sum(before.runPIDs, s.runPIDs)
			u.Shared, shared = sum(before.sharedPIDs, s.sharedPIDs)
			share = run + shared
		}
		parts = append(parts, namedCPU{name, share})
		r.Servers = append(r.Servers, u)
	}
	if complete {
		v := perDelivery(total)
		r.TotalCPUPerDeliveryUs = &v
		for _, name := range []string{shareReceiver, shareSender} {
			if cpu, ok := shares[name]; ok {
				parts = append(parts, namedCPU{name, cpu})
			}
		}
		parts = append(parts, namedCPU{shareBench, s.selfCPU - before.selfCPU})
		if s.machineOK && before.machineOK {
			r.Machine = newMachineUsage(s.machineLast-before.machineFirst, deliveries, parts)
		}
	}
	return r
}

// cpuMicros formats µs per delivery.
func cpuMicros(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f µs", v)
	}
	return fmt.Sprintf("%s µs", thousands(int(v+0.5)))
}

// kibMiB formats KiB as MiB.
func kibMiB(kib int64) string {
	v := float64(kib) / 1024
	if v < 10 {
		return fmt.Sprintf("%.1f MiB", v)
	}
	return fmt.Sprintf("%s MiB", thousands(int(v+0.5)))
}
