package bench

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookd/hookd/cmd/hookd/internal/redact"
)

// This file holds what "hookd bench" reports: the results, their checks and their text.

// Report is what "hookd bench" found; --json prints it as it is.
type Report struct {
	Command string       `json:"command"`
	Config  string       `json:"config"`
	Machine benchMachine `json:"machine"`
	// Targets holds each target's results, in the order --target names them.
	Targets []*benchTargetReport `json:"targets"`
	// Problems lists deliveries missing, unverified or duplicated, each prefixed with its
	// target and benchmark; empty when all is well.
	Problems   []string `json:"problems"`
	CPUProfile string   `json:"cpuProfile,omitempty"`
	// Kept lists the SQLite files --keep kept; the PostgreSQL targets list their own.
	Kept []string `json:"kept,omitempty"`
	// Run is the id in the names of the run's PostgreSQL schemas and Redis namespaces; absent
	// without --db.
	Run string `json:"run,omitempty"`
	// Keep is set with --keep: the schemas and namespaces were not removed.
	Keep bool `json:"keep,omitempty"`
	// Apart is set with --apart: the serve, serve-postgres and fleet targets had their receiver
	// and senders in child processes of their own.
	Apart bool `json:"apart,omitempty"`
}

// benchTargetReport is what one target did in the benchmarks that ran.
type benchTargetReport struct {
	Name        string    `json:"name"` // one of TargetNames, as --target takes it
	Description string    `json:"description"`
	B1          *b1Result `json:"b1,omitempty"`
	B2          *b2Result `json:"b2,omitempty"`
	B3          *b3Result `json:"b3,omitempty"`
	B4          *b4Result `json:"b4,omitempty"`
	// Schemas and Namespaces are the PostgreSQL schemas and Redis namespaces the target's runs
	// created, one per run, removed after it unless Keep.
	Schemas    []string `json:"schemas,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// benchMachine is where the run happened.
type benchMachine struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
}

// benchCounts is what a receiver saw, against the deliveries expected.
type benchCounts struct {
	Expected int `json:"expected"`
	// Delivered counts distinct verified (webhook-id, path) pairs on endpoints that answer.
	Delivered  int `json:"delivered"`
	Requests   int `json:"requests"`
	Unverified int `json:"unverified"`
	// Duplicates counts verified requests to answering endpoints beyond the first of their pair.
	Duplicates int `json:"duplicates"`
	// HangingRequests counts verified requests to the endpoint that never answers (B2).
	HangingRequests int `json:"hangingRequests"`
}

// b1Result is B1: fan-out throughput.
type b1Result struct {
	Endpoints  int `json:"endpoints"`
	Messages   int `json:"messages"`
	Producers  int `json:"producers"`
	Deliveries int `json:"deliveries"`

	SendSeconds float64 `json:"sendSeconds"` // first send to the last send returning
	SendsPerSec float64 `json:"sendsPerSec"`
	// SendP50Ms and SendP99Ms time one send: the library's Send call, or the API's POST from
	// the request's start to its answer read.
	SendP50Ms float64 `json:"sendP50Ms"`
	SendP99Ms float64 `json:"sendP99Ms"`
	// DeliverSeconds runs from the first send to the last verified delivery.
	DeliverSeconds   float64 `json:"deliverSeconds"`
	DeliveriesPerSec float64 `json:"deliveriesPerSec"`
	// SettledSeconds runs from the first send until the store has no pending delivery left.
	SettledSeconds    float64 `json:"settledSeconds"`
	RecordedDelivered int     `json:"recordedDelivered"`

	TargetDeliveriesPerSec float64 `json:"targetDeliveriesPerSec"`
	DeliveriesMet          bool    `json:"deliveriesMet"`
	// TargetSendsPerSec is the sends/s target of this target (the API's); absent: none.
	TargetSendsPerSec float64 `json:"targetSendsPerSec,omitempty"`
	// SendsMet says whether sendsPerSec reached TargetSendsPerSec; absent with no target.
	SendsMet *bool `json:"sendsMet,omitempty"`
	// Met is true when every target of B1 for this target is met.
	Met      bool        `json:"met"`
	Receiver benchCounts `json:"receiver"`
	// Resources is the CPU time and the peak memory B1 took; absent where getrusage is missing.
	Resources *b1Resources `json:"resources,omitempty"`
}

// judge sets the Met fields from the figures and the targets.
func (x *b1Result) judge() {
	x.DeliveriesMet = x.DeliveriesPerSec >= x.TargetDeliveriesPerSec
	x.Met = x.DeliveriesMet
	if x.TargetSendsPerSec > 0 {
		met := x.SendsPerSec >= x.TargetSendsPerSec
		x.SendsMet = &met
		x.Met = x.Met && met
	}
}

// b2Result is B2: healthy deliveries with and without an endpoint that never answers.
type b2Result struct {
	HealthyEndpoints int     `json:"healthyEndpoints"`
	Messages         int     `json:"messages"`
	TimeoutMs        float64 `json:"timeoutMs"`
	Baseline         *b2Run  `json:"baseline"`
	WithHanging      *b2Run  `json:"withHanging"`
	// Ratio is WithHanging.Seconds over Baseline.Seconds.
	Ratio       float64 `json:"ratio"`
	TargetRatio float64 `json:"targetRatio"`
	Met         bool    `json:"met"`
}

// b2Run is one run of B2.
type b2Run struct {
	// Seconds runs from the first send to the last verified healthy delivery.
	Seconds  float64     `json:"seconds"`
	Receiver benchCounts `json:"receiver"`
}

// b3Result is B3: latency of single sends in a row.
type b3Result struct {
	Sends       int         `json:"sends"`
	P50Ms       float64     `json:"p50Ms"` // send to verified arrival
	P99Ms       float64     `json:"p99Ms"`
	MaxMs       float64     `json:"maxMs"`
	SendP50Ms   float64     `json:"sendP50Ms"` // the send alone: Send, or the POST
	TargetP50Ms float64     `json:"targetP50Ms"`
	Met         bool        `json:"met"`
	Receiver    benchCounts `json:"receiver"`
}

// newReport starts the report of a run of the targets ts with the command line args.
func newReport(args []string, ts []benchTarget) *Report {
	r := &Report{
		Command: commandLine(append([]string{"hookd", "bench"}, redactBenchArgs(args)...)),
		Config: "hookd.Config defaults (workers, per-endpoint cap, circuit breaker, retry schedule) except Delivery.AllowSubnets 127.0.0.0/8, and Delivery.Timeout in B2; " +
			"the api target adds what hookd serve adds with its defaults (workers 50 per CPU up to 400, metrics OnAttempt, 1 MiB payloads)",
		Machine: benchMachine{
			GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		},
		Problems: []string{},
	}
	for _, t := range ts {
		r.Targets = append(r.Targets, &benchTargetReport{Name: t.name(), Description: t.describe()})
		switch t.name() {
		case "postgres+redis":
			r.Config += "; postgres+redis passes a redisqueue.Queue as Config.Queue (QueueConfig defaults: 100 first, 50 retry and 10 manual workers; the client's job timeout)"
		case "serve", "serve-postgres", "fleet":
			r.Config += "; " + t.name() + " runs hookd serve processes with serve's defaults but --allow-subnets 127.0.0.0/8, --timeout in B2, " +
				"--max-endpoints-per-app none and --max-messages-per-second-per-app none"
		}
	}
	return r
}

// redactBenchArgs returns args with the passwords of the --db and --queue URLs replaced.
func redactBenchArgs(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "db" && name != "queue") {
			continue
		}
		switch {
		case hasValue:
			out[i] = a[:len(a)-len(value)] + redact.URL(value)
		case i+1 < len(out):
			out[i+1] = redact.URL(out[i+1])
		}
	}
	return out
}

// problems lists every delivery missing, unverified or duplicated, on every target.
func (r *Report) problems() []string {
	out := []string{}
	for _, t := range r.Targets {
		out = append(out, t.problems()...)
	}
	return out
}

// problems lists every delivery missing, unverified or duplicated on target r.
func (r *benchTargetReport) problems() []string {
	out := []string{}
	check := func(bench string, c benchCounts) {
		name := r.Name + " " + bench
		if c.Delivered < c.Expected {
			out = append(out, fmt.Sprintf("%s: %d of %d deliveries arrived verified", name, c.Delivered, c.Expected))
		}
		if c.Unverified > 0 {
			out = append(out, fmt.Sprintf("%s: %d requests did not verify", name, c.Unverified))
		}
		if c.Duplicates > 0 {
			out = append(out, fmt.Sprintf("%s: %d duplicate deliveries", name, c.Duplicates))
		}
	}
	if r.B1 != nil {
		check("B1", r.B1.Receiver)
		if r.B1.RecordedDelivered != r.B1.Deliveries {
			out = append(out, fmt.Sprintf("%s B1: the store records %d of %d deliveries delivered", r.Name, r.B1.RecordedDelivered, r.B1.Deliveries))
		}
	}
	if r.B2 != nil {
		check("B2 without the hanging endpoint", r.B2.Baseline.Receiver)
		check("B2 with the hanging endpoint", r.B2.WithHanging.Receiver)
	}
	if r.B3 != nil {
		check("B3", r.B3.Receiver)
	}
	if r.B4 != nil {
		check("B4", r.B4.Receiver)
		out = append(out, r.B4.problems(r.Name)...)
	}
	return out
}

// Text renders the report for a human: one table per benchmark, with a column per target.
func (r *Report) Text() string {
	b := new(strings.Builder)
	m := r.Machine
	fmt.Fprintf(b, "hookd bench\ncommand: %s\n", r.Command)
	width := 0
	for _, t := range r.Targets {
		width = max(width, len(t.Name))
	}
	for i, t := range r.Targets {
		label := "targets:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(b, "%-8s %-*s  %s\n", label, width, t.Name, t.Description)
	}
	fmt.Fprintf(b, "config:  %s\nmachine: %s/%s, %d CPUs (GOMAXPROCS %d), %s\n",
		r.Config, m.GOOS, m.GOARCH, m.CPUs, m.GOMAXPROCS, m.Go)
	// Every row has every cell, so that tabwriter aligns every column but the last (it never
	// pads a line's last cell); flush trims the padding left before an empty target.
	table := new(strings.Builder)
	tw := tabwriter.NewWriter(table, 0, 0, 2, ' ', 0)
	flush := func() {
		tw.Flush()
		for line := range strings.Lines(table.String()) {
			fmt.Fprintln(b, strings.TrimRight(line, " \n"))
		}
		table.Reset()
	}
	// row adds a figure: its label, one cell per target from cell, and the target.
	row := func(label string, cell func(*benchTargetReport) string, target string) {
		cells := []string{label}
		for _, t := range r.Targets {
			cells = append(cells, cell(t))
		}
		fmt.Fprintln(tw, "  "+strings.Join(append(cells, target), "\t"))
	}
	header := func() {
		row("figure", func(t *benchTargetReport) string { return t.Name }, "target")
	}
	first := r.Targets[0]
	if x := first.B1; x != nil {
		fmt.Fprintf(b, "\nB1  %d endpoints × %s messages = %s deliveries, %d producers\n",
			x.Endpoints, thousands(x.Messages), thousands(x.Deliveries), x.Producers)
		header()
		row("deliveries/s, first send to last verified delivery", func(t *benchTargetReport) string {
			return thousands(int(t.B1.DeliveriesPerSec+0.5)) + " " + mark(t.B1.DeliveriesMet)
		}, r.targetCell(func(t *benchTargetReport) string { return "≥ " + thousands(int(t.B1.TargetDeliveriesPerSec)) }))
		sendsTarget := ""
		for _, t := range r.Targets {
			if v := t.B1.TargetSendsPerSec; v > 0 {
				sendsTarget = joinNonEmpty(sendsTarget, t.Name+" ≥ "+thousands(int(v)))
			}
		}
		row("sends/s", func(t *benchTargetReport) string {
			s := thousands(int(t.B1.SendsPerSec + 0.5))
			if t.B1.SendsMet != nil {
				s += " " + mark(*t.B1.SendsMet)
			}
			return s
		}, sendsTarget)
		row("send latency p50 / p99", func(t *benchTargetReport) string {
			return fmt.Sprintf("%s / %s ms", ms(t.B1.SendP50Ms), ms(t.B1.SendP99Ms))
		}, "")
		row("last verified delivery after", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B1.DeliverSeconds)
		}, "")
		row("store settled after", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B1.SettledSeconds)
		}, "")
		row("recorded delivered in the store", func(t *benchTargetReport) string {
			return thousands(t.B1.RecordedDelivered) + " " + mark(t.B1.RecordedDelivered == t.B1.Deliveries)
		}, thousands(x.Deliveries))
		countsRow(row, "", func(t *benchTargetReport) benchCounts { return t.B1.Receiver }, x.Receiver.Expected)
		servers, withResources := r.resourceRows(row)
		flush()
		fmt.Fprintln(b, "  (a send is the library's Send call, or the API's POST /api/v1/app/{app}/msg answered 202)")
		if withResources {
			fmt.Fprintln(b, "  (CPU: user + system time from the first send until the store settled, over the deliveries. This process's")
			fmt.Fprintln(b, "  by getrusage: besides hookd it runs the receiver, the producers and, for api, the HTTP server.")
			if len(hookdProcessNames(r)) > 0 {
				fmt.Fprintln(b, "  For serve, serve-postgres and fleet hookd runs in child processes, each one's own by /proc/<pid>/stat;")
				fmt.Fprintln(b, "  this process runs only the receiver and the producers there, and with --apart not even those:")
				fmt.Fprintln(b, "  the bench receiver and bench sender children do, each one's own by /proc/<pid>/stat.")
			}
			if len(machineShareNames(r)) > 0 {
				fmt.Fprintln(b, "  The whole machine's: every CPU's time but idle and I/O wait in /proc/stat, split into hookd's")
				fmt.Fprintln(b, "  children, the servers' processes (postgres: this run's backends and its own processes), the")
				fmt.Fprintln(b, "  receiver and sender children, this process (bench), and other: the rest of the machine, other")
				fmt.Fprintln(b, "  work on it (other clients' backends too). The shares add up to the whole.")
			}
			if len(servers) > 0 {
				fmt.Fprintf(b, "  The %s processes' by /proc/<pid>/stat: every one on this machine, whatever it served,\n", strings.Join(servers, " and "))
				fmt.Fprintln(b, "  with the children that ended meanwhile (PostgreSQL's backends, through the postmaster); of which")
				fmt.Fprintln(b, "  this run's backends: those whose connection has the run's application_name, without the server's")
				fmt.Fprintln(b, "  own processes (WAL writer, checkpointer, autovacuum), shown apart, and other clients' backends.")
			}
			fmt.Fprint(b, "  Peak RSS: this process's during B1 (getrusage maxrss, reset before B1 through /proc/self/clear_refs)")
			if len(servers) > 0 {
				fmt.Fprint(b, ";\n  the servers' the largest VmHWM, each process's peak since it started (PostgreSQL's counts the shared\n  buffers it touched)")
			}
			fmt.Fprintln(b, ".)")
		}
	}
	if x := first.B2; x != nil {
		fmt.Fprintf(b, "\nB2  %d healthy endpoints (+1 that never answers, %s timeout), %s messages = %s healthy deliveries\n",
			x.HealthyEndpoints, time.Duration(x.TimeoutMs*float64(time.Millisecond)), thousands(x.Messages), thousands(x.Baseline.Receiver.Expected))
		header()
		row("all healthy delivered, without the hanging endpoint", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B2.Baseline.Seconds)
		}, "")
		row("all healthy delivered, with the hanging endpoint", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B2.WithHanging.Seconds)
		}, "")
		row("ratio", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f× %s", t.B2.Ratio, mark(t.B2.Met))
		}, fmt.Sprintf("≤ %.1f×", x.TargetRatio))
		row("requests to the hanging endpoint", func(t *benchTargetReport) string {
			return thousands(t.B2.WithHanging.Receiver.HangingRequests)
		}, "")
		countsRow(row, "without hanging: ", func(t *benchTargetReport) benchCounts { return t.B2.Baseline.Receiver }, x.Baseline.Receiver.Expected)
		countsRow(row, "with hanging: ", func(t *benchTargetReport) benchCounts { return t.B2.WithHanging.Receiver }, x.WithHanging.Receiver.Expected)
		flush()
	}
	if x := first.B3; x != nil {
		fmt.Fprintf(b, "\nB3  %d single sends in a row to one endpoint\n", x.Sends)
		header()
		row("send to verified arrival p50 / p99 / max", func(t *benchTargetReport) string {
			return fmt.Sprintf("%s / %s / %s ms %s", ms(t.B3.P50Ms), ms(t.B3.P99Ms), ms(t.B3.MaxMs), mark(t.B3.Met))
		}, r.targetCell(func(t *benchTargetReport) string { return "p50 ≤ " + ms(t.B3.TargetP50Ms) + " ms" }))
		row("the send alone, p50", func(t *benchTargetReport) string { return ms(t.B3.SendP50Ms) + " ms" }, "")
		countsRow(row, "", func(t *benchTargetReport) benchCounts { return t.B3.Receiver }, x.Receiver.Expected)
		flush()
	}
	if x := first.B4; x != nil {
		textB4(b, x, header, flush, row)
	}
	fmt.Fprintln(b)
	if len(r.Problems) == 0 {
		fmt.Fprintln(b, "every delivery arrived once, verified")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(b, "PROBLEM: %s\n", p)
	}
	if r.CPUProfile != "" {
		fmt.Fprintf(b, "CPU profile of the whole run (hookd, API server, receiver and producers): %s; read it with go tool pprof -top %s\n", r.CPUProfile, r.CPUProfile)
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(b, "databases kept: %s\n", strings.Join(r.Kept, " "))
	}
	for _, t := range r.Targets {
		switch {
		case len(t.Schemas) == 0:
		case r.Keep:
			fmt.Fprintf(b, "%s kept: PostgreSQL schemas %s", t.Name, strings.Join(t.Schemas, " "))
			if len(t.Namespaces) > 0 {
				fmt.Fprintf(b, "; Redis namespaces %s", strings.Join(t.Namespaces, " "))
			}
			fmt.Fprintln(b)
		default:
			fmt.Fprintf(b, "%s: dropped its %s %s*", t.Name, benchPlural(len(t.Schemas), "PostgreSQL schema"), benchCommonPrefix(t.Schemas))
			if len(t.Namespaces) > 0 {
				fmt.Fprintf(b, " and deleted its %s %s*", benchPlural(len(t.Namespaces), "Redis namespace"), benchCommonPrefix(t.Namespaces))
			}
			fmt.Fprintln(b)
		}
	}
	return b.String()
}

// resourceRows adds B1's CPU and memory rows to a table made by text, when a target has them,
// and returns the server processes the rows show (postgres, redis-server).
func (r *Report) resourceRows(row func(string, func(*benchTargetReport) string, string)) (servers []string, shown bool) {
	for _, t := range r.Targets {
		if res := t.B1.Resources; res != nil {
			shown = true
			for _, s := range res.Servers {
				if !slices.Contains(servers, s.Name) {
					servers = append(servers, s.Name)
				}
			}
		}
	}
	if !shown {
		return nil, false
	}
	// cell formats a figure of a target's resources, or "-" without it.
	cell := func(f func(*b1Resources) (string, bool)) func(*benchTargetReport) string {
		return func(t *benchTargetReport) string {
			if t.B1.Resources != nil {
				if s, ok := f(t.B1.Resources); ok {
					return s
				}
			}
			return "-"
		}
	}
	server := func(res *b1Resources, name string) (serverUsage, bool) {
		i := slices.IndexFunc(res.Servers, func(s serverUsage) bool { return s.Name == name })
		if i < 0 {
			return serverUsage{}, false
		}
		return res.Servers[i], true
	}
	row("CPU per delivery: this process", cell(func(res *b1Resources) (string, bool) {
		return cpuMicros(res.ProcessCPUPerDeliveryUs), true
	}), "")
	hookdProcs := hookdProcessNames(r)
	hookdProc := func(res *b1Resources, name string) (processUsage, bool) {
		i := slices.IndexFunc(res.Hookd, func(p processUsage) bool { return p.Name == name })
		if i < 0 {
			return processUsage{}, false
		}
		return res.Hookd[i], true
	}
	for _, name := range hookdProcs {
		row("CPU per delivery: "+name+" process", cell(func(res *b1Resources) (string, bool) {
			p, ok := hookdProc(res, name)
			return cpuMicros(p.CPUPerDeliveryUs), ok
		}), "")
	}
	apartProcs := apartProcessNames(r)
	apartProc := func(res *b1Resources, name string) (processUsage, bool) {
		i := slices.IndexFunc(res.Apart, func(p processUsage) bool { return p.Name == name })
		if i < 0 {
			return processUsage{}, false
		}
		return res.Apart[i], true
	}
	for _, name := range apartProcs {
		row("CPU per delivery: "+name+" process", cell(func(res *b1Resources) (string, bool) {
			p, ok := apartProc(res, name)
			return cpuMicros(p.CPUPerDeliveryUs), ok
		}), "")
	}
	for _, name := range servers {
		row("CPU per delivery: "+name+" processes", cell(func(res *b1Resources) (string, bool) {
			s, ok := server(res, name)
			return cpuMicros(s.CPUPerDeliveryUs), ok
		}), "")
		run := func(res *b1Resources) (string, bool) {
			s, ok := server(res, name)
			if !ok || s.Run == nil {
				return "", false
			}
			return fmt.Sprintf("%s (%d)", cpuMicros(s.Run.CPUPerDeliveryUs), s.Run.Processes), true
		}
		if slices.ContainsFunc(r.Targets, func(t *benchTargetReport) bool { return cell(run)(t) != "-" }) {
			row("  of which this run's "+name+" backends (how many)", cell(run), "")
			row("  of which "+name+"'s own processes (how many)", cell(func(res *b1Resources) (string, bool) {
				s, ok := server(res, name)
				if !ok || s.Shared == nil {
					return "", false
				}
				return fmt.Sprintf("%s (%d)", cpuMicros(s.Shared.CPUPerDeliveryUs), s.Shared.Processes), true
			}), "")
		}
	}
	if len(servers) > 0 || len(hookdProcs) > 0 || len(apartProcs) > 0 {
		row("CPU per delivery: total", cell(func(res *b1Resources) (string, bool) {
			if res.TotalCPUPerDeliveryUs == nil {
				return "", false
			}
			return cpuMicros(*res.TotalCPUPerDeliveryUs), true
		}), "")
	}
	if shares := machineShareNames(r); len(shares) > 0 {
		row("CPU per delivery: whole machine (/proc/stat)", cell(func(res *b1Resources) (string, bool) {
			if res.Machine == nil {
				return "", false
			}
			return cpuMicros(res.Machine.CPUPerDeliveryUs), true
		}), "")
		for _, name := range shares {
			row("  of which "+name, cell(func(res *b1Resources) (string, bool) {
				if res.Machine == nil {
					return "", false
				}
				i := slices.IndexFunc(res.Machine.Shares, func(s cpuShare) bool { return s.Name == name })
				if i < 0 {
					return "", false
				}
				return shareCell(res.Machine.Shares[i]), true
			}), "")
		}
		row("  the run's processes (all but other)", cell(func(res *b1Resources) (string, bool) {
			if res.Machine == nil {
				return "", false
			}
			return cpuMicros(res.Machine.RunCPUPerDeliveryUs), true
		}), "")
	}
	row("peak RSS: this process", cell(func(res *b1Resources) (string, bool) {
		if res.ProcessMaxRSSSinceStart {
			return kibMiB(res.ProcessMaxRSSKiB) + " (since start)", true
		}
		return kibMiB(res.ProcessMaxRSSKiB), true
	}), "")
	for _, name := range hookdProcs {
		row("peak RSS: "+name+" process (VmHWM)", cell(func(res *b1Resources) (string, bool) {
			p, ok := hookdProc(res, name)
			return kibMiB(p.MaxVmHWMKiB), ok
		}), "")
	}
	for _, name := range servers {
		row("peak RSS: largest "+name+" process (VmHWM)", cell(func(res *b1Resources) (string, bool) {
			s, ok := server(res, name)
			return kibMiB(s.MaxVmHWMKiB), ok
		}), "")
	}
	return servers, true
}

// hookdProcessNames returns the names of the hookd processes outside this process that B1's
// resources show for some target, in the order of the first target to have each.
func hookdProcessNames(r *Report) []string {
	return b1Names(r, func(res *b1Resources) []string {
		var names []string
		for _, p := range res.Hookd {
			names = append(names, p.Name)
		}
		return names
	})
}

// apartProcessNames is hookdProcessNames for the receiver and sender children.
func apartProcessNames(r *Report) []string {
	return b1Names(r, func(res *b1Resources) []string {
		var names []string
		for _, p := range res.Apart {
			names = append(names, p.Name)
		}
		return names
	})
}

// machineShareNames returns the names of the shares of the machine's CPU time that some target
// shows, other last.
func machineShareNames(r *Report) []string {
	names := b1Names(r, func(res *b1Resources) []string {
		var names []string
		if res.Machine != nil {
			for _, s := range res.Machine.Shares {
				if s.Name != shareOther {
					names = append(names, s.Name)
				}
			}
		}
		return names
	})
	if len(names) == 0 {
		return nil
	}
	return append(names, shareOther)
}

// b1Names returns the names of, for each target in turn, B1's resources give, each once.
func b1Names(r *Report, of func(*b1Resources) []string) []string {
	var names []string
	for _, t := range r.Targets {
		if t.B1 == nil || t.B1.Resources == nil {
			continue
		}
		for _, name := range of(t.B1.Resources) {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// targetCell returns the target column of a figure whose target, as format writes it, may
// differ between targets: "≥ 1,500" when they share it, else "library, api ≥ 1,500; postgres ≥ 5,000".
func (r *Report) targetCell(format func(*benchTargetReport) string) string {
	var targets []string
	names := map[string][]string{}
	for _, t := range r.Targets {
		f := format(t)
		if _, seen := names[f]; !seen {
			targets = append(targets, f)
		}
		names[f] = append(names[f], t.Name)
	}
	if len(targets) == 1 {
		return targets[0]
	}
	parts := make([]string, len(targets))
	for i, f := range targets {
		parts[i] = strings.Join(names[f], ", ") + " " + f
	}
	return strings.Join(parts, "; ")
}

// countsRow adds the receiver's counts, from counts, to a table made by text.
func countsRow(row func(string, func(*benchTargetReport) string, string), label string, counts func(*benchTargetReport) benchCounts, expected int) {
	row(label+"verified deliveries / requests / unverified / duplicates", func(t *benchTargetReport) string {
		c := counts(t)
		ok := c.Delivered >= c.Expected && c.Unverified == 0 && c.Duplicates == 0
		return fmt.Sprintf("%s / %s / %d / %d %s", thousands(c.Delivered), thousands(c.Requests), c.Unverified, c.Duplicates, mark(ok))
	}, thousands(expected)+" / - / 0 / 0")
}

// benchPlural writes n things: "1 schema", "4 schemas".
func benchPlural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// benchCommonPrefix returns the longest prefix of every string in ss.
func benchCommonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		n := 0
		for n < len(p) && n < len(s) && p[n] == s[n] {
			n++
		}
		p = p[:n]
	}
	return p
}

// joinNonEmpty joins a and b with ", ", leaving out an empty one.
func joinNonEmpty(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + ", " + b
}

// mark is ✓ for ok, ✗ otherwise.
func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// percentile returns the p-th percentile of ds by the nearest-rank method (p 100: the maximum).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// millis converts d to milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ms formats milliseconds with three significant digits or so.
func ms(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// commandLine joins args as a POSIX shell would read them back.
func commandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=,./:@%+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
