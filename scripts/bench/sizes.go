package main

// -sizes runs the gateway's local server under the CPU share each function size gets, with a
// kernel CPU quota (CFS bandwidth control) around the gateway process alone: the upstream,
// the load generator and this process keep the rest of the machine, so what the table shows
// is the gateway starved as the size would starve it, not the load starved with it.
//
// How faithful this is:
//   - Lambda gives a function memory/1,769 MB of one vCPU, and in practice enforces it the
//     same way, with a CFS quota per period; a size under 1,769 MB runs at full speed until it
//     has spent its share of the period and then waits for the next one. Here the period is
//     the kernel's 100 ms (cpu.cfs_period_us), so a request that needs more than the share
//     of one period waits up to the rest of it, as on Lambda: the tail is the quota's, not the
//     code's. The exact period Lambda uses is not published.
//   - Lambda's init phase is reported to run with more CPU than the size's share, and Cloud
//     Run (under Cloud Functions gen2) offers a startup CPU boost; here the cold start runs
//     under the quota from exec, so it is an upper bound for both.
//   - Cloud Functions gen2 bills and throttles by the instance's vCPU setting; its fractional
//     settings are a quota as well. With concurrency above 1 the instance has 1 vCPU, which is
//     the quota of one whole core here; the other core carries the load and the upstream.
//   - The quota limits time, not cores: the gateway still sees both of this machine's cores
//     (Go 1.25's cgroup-aware GOMAXPROCS never goes below 2), so it can spend its share on two
//     threads at once and use it up in half the wall time. Lambda below 1,769 MB shows two
//     vCPUs as well.
//   - Memory is not limited, only measured (peak RSS, VmHWM), to be set beside the size.
//   - The server is the local one (net/http), not the Lambda bootstrap (lambdaurl behind the
//     Runtime API) nor the functions framework; the gateway's own work per request is the same.
//     Absolute times are this machine's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fngate/fngate/core/cost"
	"github.com/fngate/fngate/internal/loopback"
	"github.com/fngate/fngate/scripts/internal/proc"
)

// fnSize is one function size: its share of one vCPU and the requests it serves at once.
type fnSize struct {
	name     string
	platform string // "lambda" or "gcf", as core/cost names them
	memoryMB int
	cpu      float64 // vCPUs
	conc     int
}

// lambdaMBPerVCPU is the memory at which Lambda gives a function one full vCPU.
const lambdaMBPerVCPU = 1769

func functionSizes() []fnSize {
	var s []fnSize
	for _, mb := range []int{128, 256, 512, 1024} {
		s = append(s, fnSize{fmt.Sprintf("Lambda %d MB", mb), cost.PlatformLambda, mb, float64(mb) / lambdaMBPerVCPU, 1})
	}
	// Cloud Functions' tiers below 2 vCPUs, each with the memory it comes with; 2 cannot be
	// measured on a 2-core machine that also runs the load. Concurrency above 1 needs at least
	// 1 vCPU.
	for _, t := range []struct {
		cpu float64
		mb  int
	}{{0.083, 128}, {0.167, 256}, {0.333, 512}, {0.583, 1024}, {1, 2048}} {
		s = append(s, fnSize{fmt.Sprintf("Cloud Functions %g vCPU", t.cpu), cost.PlatformGCF, t.mb, t.cpu, 1})
	}
	// Above concurrency 1 the module's default memory, 512 MiB: memory is measured here, not
	// limited, and 250 open streams peak far below it.
	for _, c := range []int{80, 250} {
		s = append(s, fnSize{fmt.Sprintf("Cloud Functions 1 vCPU, concurrency %d", c), cost.PlatformGCF, 512, 1, c})
	}
	return s
}

// sizeHold is the fake upstream's pause before a whole answer and between stream chunks in
// -sizes (a 200-chunk stream lasts about 200 ms), and sizeGap the wait between one client's
// requests: a function spends most of a request waiting on its model, and a CPU quota binds on
// what the gateway does in one CFS period, so back-to-back requests at zero think time would
// measure a load no function sees. Direct and the gateway are paced alike.
//
// With one request in flight the upstream sends a chunk a millisecond, faster than any model,
// so what the quota does to a stream is an upper bound. With 80 or 250 in flight it sends one
// each sizeHoldShared (100 tokens a second per stream, a fast model): the instance then holds
// that many streams open at once at a chunk rate it would see, which is what sets its CPU and
// memory.
const (
	sizeHold       = time.Millisecond
	sizeHoldShared = 10 * time.Millisecond
	sizeGap        = cpuPeriod
)

// cpuPeriod is the CFS period the quota is expressed in, the kernel's default.
const cpuPeriod = 100 * time.Millisecond

// quotaUS is the quota per period for a share of vCPUs.
func quotaUS(cpu float64) int64 {
	return int64(cpu*float64(cpuPeriod/time.Microsecond) + 0.5)
}

// cgroup is one CPU-quota group of the kernel's cpu controller, v1 or v2.
type cgroup struct {
	dir string
	v2  bool
}

// cgroupRoot finds where groups with a cpu controller can be made under sysfs (normally
// /sys/fs/cgroup): the v2 hierarchy when its root lists the cpu controller, else the v1 cpu
// hierarchy.
func cgroupRoot(sysfs string) (dir string, v2 bool, err error) {
	if b, err := os.ReadFile(filepath.Join(sysfs, "cgroup.controllers")); err == nil {
		if slices.Contains(strings.Fields(string(b)), "cpu") {
			return sysfs, true, nil
		}
	}
	for _, d := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
		p := filepath.Join(sysfs, d)
		if _, err := os.Stat(filepath.Join(p, "cpu.cfs_quota_us")); err == nil {
			return p, false, nil
		}
	}
	return "", false, fmt.Errorf("no cgroup cpu controller under %s (neither v2 with cpu in cgroup.controllers nor v1 cpu.cfs_quota_us)", sysfs)
}

// newCgroup makes the group name under root and sets its quota to cpu vCPUs.
func newCgroup(root string, v2 bool, name string, cpu float64) (*cgroup, error) {
	if v2 {
		// A child gets the cpu controller only when its parent hands it down.
		sub := filepath.Join(root, "cgroup.subtree_control")
		if b, err := os.ReadFile(sub); err == nil && !slices.Contains(strings.Fields(string(b)), "cpu") {
			if err := os.WriteFile(sub, []byte("+cpu"), 0o644); err != nil {
				return nil, fmt.Errorf("enabling the cpu controller in %s: %w", sub, err)
			}
		}
	}
	g := &cgroup{dir: filepath.Join(root, name), v2: v2}
	if err := os.Mkdir(g.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	// The group's weight against the rest of the machine: the most the kernel allows, so
	// other work on a shared machine takes what the quota leaves rather than the quota's share.
	weight, file := "262144", "cpu.shares"
	if v2 {
		weight, file = "10000", "cpu.weight"
	}
	_ = os.WriteFile(filepath.Join(g.dir, file), []byte(weight), 0o644)
	if err := g.setQuota(cpu); err != nil {
		_ = os.Remove(g.dir)
		return nil, err
	}
	return g, nil
}

func (g *cgroup) setQuota(cpu float64) error {
	q, p := quotaUS(cpu), int64(cpuPeriod/time.Microsecond)
	if g.v2 {
		return os.WriteFile(filepath.Join(g.dir, "cpu.max"), []byte(fmt.Sprintf("%d %d", q, p)), 0o644)
	}
	// The period first: the kernel checks the quota against the period in force.
	if err := os.WriteFile(filepath.Join(g.dir, "cpu.cfs_period_us"), []byte(strconv.FormatInt(p, 10)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(g.dir, "cpu.cfs_quota_us"), []byte(strconv.FormatInt(q, 10)), 0o644)
}

// quota reads back the group's quota and period in microseconds.
func (g *cgroup) quota() (q, p int64, err error) {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(g.dir, name))
		return strings.TrimSpace(string(b)), err
	}
	if g.v2 {
		s, err := read("cpu.max")
		if err != nil {
			return 0, 0, err
		}
		f := strings.Fields(s)
		if len(f) != 2 {
			return 0, 0, fmt.Errorf("cpu.max: %q", s)
		}
		if f[0] == "max" {
			q = -1
		} else if q, err = strconv.ParseInt(f[0], 10, 64); err != nil {
			return 0, 0, err
		}
		p, err = strconv.ParseInt(f[1], 10, 64)
		return q, p, err
	}
	qs, err := read("cpu.cfs_quota_us")
	if err != nil {
		return 0, 0, err
	}
	ps, err := read("cpu.cfs_period_us")
	if err != nil {
		return 0, 0, err
	}
	if q, err = strconv.ParseInt(qs, 10, 64); err != nil {
		return 0, 0, err
	}
	p, err = strconv.ParseInt(ps, 10, 64)
	return q, p, err
}

// throttle is the group's CFS figures: periods in which it ran, and in which it ran out.
type throttle struct{ periods, throttled int64 }

func (g *cgroup) throttle() throttle {
	b, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return throttle{}
	}
	return parseThrottle(string(b))
}

func parseThrottle(s string) throttle {
	var t throttle
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "nr_periods":
			t.periods = n
		case "nr_throttled":
			t.throttled = n
		}
	}
	return t
}

// remove deletes the group once the kernel has let go of its last process.
func (g *cgroup) remove() error {
	var err error
	for range 50 {
		if err = os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// cgroupPrefix names this command's groups, so a run that was killed leaves groups the next
// run can recognise and remove.
const cgroupPrefix = "fngate-bench-"

func removeStaleCgroups(root string) {
	ds, _ := filepath.Glob(filepath.Join(root, cgroupPrefix+"*"))
	for _, d := range ds {
		_ = os.Remove(d) // fails, as it should, while a process is still inside
	}
}

// execInCgroup is -mode incgroup: it moves this process into the group and execs args, so
// the gateway is under the quota from its first instruction (a process started first and
// moved after would have initialised at full speed). Before exec it writes the time to
// stampFile, so a cold start is timed from the exec and not from this wrapper's own start.
func execInCgroup(dir, stampFile string, args []string) error {
	if len(args) == 0 {
		return errors.New("incgroup: nothing to run")
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("joining %s: %w", dir, err)
	}
	if stampFile != "" {
		if err := os.WriteFile(stampFile, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600); err != nil {
			return err
		}
	}
	return syscall.Exec(args[0], args, os.Environ())
}

// startInCgroup starts the gateway binary inside g through the incgroup wrapper.
func startInCgroup(self string, g *cgroup, logTo, stamp string, args ...string) (*proc.Process, error) {
	wrap := append([]string{self, "-mode", "incgroup", "-cgroup", g.dir, "-stamp", stamp, "--"}, args...)
	return proc.Start("gateway", logTo, wrap...)
}

// peakRSSMB is the process's peak resident set (VmHWM) in MB.
func peakRSSMB(pid int) float64 { return statusMB(pid, "VmHWM") }

// resetPeakRSS starts the high-water mark again from the current RSS (clear_refs 5), so
// each scenario's peak is its own and not the largest of the scenarios before it.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0o200)
}

// raisePriority re-executes the benchmark at the highest priority (nice -20), so that on a
// machine other work shares the measured processes run first: the upstream, the load, and
// the proxy and the gateway inside their quotas all inherit it. Linux keeps a nice value per
// thread and a thread inherits its creator's, so the one thread that sets it execs the
// process again, and every thread of the new image descends from it.
func raisePriority() error {
	const marker = "FNGATE_BENCH_PRIORITY"
	if os.Getenv(marker) != "" {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, -20); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(self, os.Args, append(os.Environ(), marker+"=1"))
}

// sizeOptions are the flags of -sizes beyond the bench's own.
type sizeOptions struct {
	coldStarts int
	sysfs      string
	json       string // the figures for `fngate cost -measured`
}

func runSizes(opt options, so sizeOptions) error {
	if err := raisePriority(); err != nil {
		fmt.Fprintf(os.Stderr, "could not raise the benchmark's priority (%v): other work on the machine will show in the figures\n", err)
	}
	started := time.Now()
	root, v2, err := cgroupRoot(so.sysfs)
	if err != nil {
		return fmt.Errorf("-sizes needs a CPU quota around the gateway and cannot set one here: %w", err)
	}
	removeStaleCgroups(root)
	// Fail before building anything when groups cannot be made (not root, read-only mount).
	probe, err := newCgroup(root, v2, fmt.Sprintf("%sprobe-%d", cgroupPrefix, os.Getpid()), 0.5)
	if err != nil {
		return fmt.Errorf("-sizes needs a CPU quota around the gateway and cannot set one under %s: %w", root, err)
	}
	if err := probe.remove(); err != nil {
		return err
	}
	version := "v1 (cpu.cfs_quota_us)"
	if v2 {
		version = "v2 (cpu.max)"
	}

	tmp, err := os.MkdirTemp("", "fngate-bench-sizes")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	loadBefore := loadAvg()
	fmt.Fprintln(os.Stderr, "building the local server...")
	gwBin, err := proc.BuildLocal(tmp)
	if err != nil {
		return err
	}
	preciseCPU = true
	type upstream struct{ addr, cfg string }
	var ups [2]upstream // by whether the size serves requests concurrently
	for i, hold := range []time.Duration{sizeHold, sizeHoldShared} {
		addr := proc.FreeAddr()
		up, err := proc.Start("upstream", "", self, "-mode", "upstream", "-addr", addr, "-hold", hold.String())
		if err != nil {
			return err
		}
		defer up.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = proc.WaitListening(ctx, addr)
		cancel()
		if err != nil {
			return err
		}
		// The config names a second, holding upstream: here both are the one upstream.
		ups[i] = upstream{addr, writeConfig(tmp, fmt.Sprintf("bench-%d.yaml", i), fmt.Sprintf(gatewayConfig, addr, addr))}
	}

	b := &bench{opt: opt, results: map[string][]*stats{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxIdleConns: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}},
		gap:    sizeGap}
	measured := cost.Measured{Source: fmt.Sprintf("make bench-sizes, %s, %d CPUs, cgroup %s quota", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), version)}
	var coldRows [][]string
	rowsByTarget := map[int][][]string{} // 1: the reverse proxy, 2: the gateway
	for i, sz := range functionSizes() {
		label := func(s string) string { return fmt.Sprintf("%s: %s", sz.name, s) }
		up := ups[0]
		if sz.conc > 1 {
			up = ups[1]
		}
		upAddr, cfg := up.addr, up.cfg
		coldMs := 0.0
		g, err := newCgroup(root, v2, fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), i), sz.cpu)
		if err != nil {
			return err
		}
		share := fmt.Sprintf("%.1f%% (%d/%d us)", sz.cpu*100, quotaUS(sz.cpu), cpuPeriod/time.Microsecond)

		if so.coldStarts > 0 && (opt.only == nil || opt.only.MatchString(label("cold start"))) {
			fmt.Fprintf(os.Stderr, "%s...\n", label("cold start"))
			var firsts []time.Duration
			var rss []float64
			for range so.coldStarts {
				d, r, err := coldStart(self, g, tmp, gwBin, cfg)
				if err != nil {
					_ = g.remove()
					return fmt.Errorf("%s: %w", label("cold start"), err)
				}
				firsts, rss = append(firsts, d), append(rss, r)
			}
			coldRows = append(coldRows, []string{sz.name, share, spreadMS(firsts), fmt.Sprintf("%.1f", median(rss)), strconv.Itoa(len(firsts))})
			coldMs = float64(median(firsts)) / 1e6
		}

		scs := sizeScenarios(sz.conc)
		if !slices.ContainsFunc(scs, func(sc sizeScenario) bool { return opt.only == nil || opt.only.MatchString(label(sc.label)) }) {
			if err := g.remove(); err != nil {
				return err
			}
			continue
		}
		gwAddr := proc.FreeAddr()
		gw, err := startInCgroup(self, g, filepath.Join(tmp, "gateway.log"), "", gwBin, "-config", cfg, "-addr", gwAddr, "-route-state", "off")
		if err != nil {
			_ = g.remove()
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = proc.WaitListening(ctx, gwAddr)
		cancel()
		if err != nil {
			gw.Stop()
			_ = g.remove()
			return err
		}
		pid := gw.Cmd.Process.Pid
		// The floor beside it: a bare reverse proxy under the same quota, in a group of its own.
		pg, err := newCgroup(root, v2, fmt.Sprintf("%s%d-%d-proxy", cgroupPrefix, os.Getpid(), i), sz.cpu)
		if err != nil {
			gw.Stop()
			_ = g.remove()
			return err
		}
		proxyAddr := proc.FreeAddr()
		px, err := startInCgroup(self, pg, "", "", self, "-mode", "proxy", "-addr", proxyAddr, "-target", "http://"+upAddr)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = proc.WaitListening(ctx, proxyAddr)
			cancel()
		}
		if err != nil {
			gw.Stop()
			_ = g.remove()
			_ = pg.remove()
			return err
		}
		for _, sc := range scs {
			ts := []target{
				{"direct", "http://" + upAddr, "bench", 0, sc.wire, ""},
				{"httputil.ReverseProxy", "http://" + proxyAddr, "bench", px.Cmd.Process.Pid, sc.wire, ""},
				{"fngate", "http://" + gwAddr, sc.model, pid, sc.wire, ""},
			}
			_ = resetPeakRSS(pid)
			_ = resetPeakRSS(px.Cmd.Process.Pid)
			th0, pth0 := g.throttle(), pg.throttle()
			st := b.measure(scenario{label(sc.label), sz.conc, sc.stream, ts})
			if st == nil {
				continue
			}
			for j, grp := range map[int]*cgroup{1: pg, 2: g} {
				s, t0 := st[j], th0
				if j == 1 {
					t0 = pth0
				}
				th := grp.throttle()
				throttled := ""
				if n := th.periods - t0.periods; n > 0 {
					throttled = fmt.Sprintf("%.0f%%", 100*float64(th.throttled-t0.throttled)/float64(n))
				}
				ttft, addTTFT := "", ""
				if sc.stream {
					ttft, addTTFT = msf(pct(s.pooled.ttft, .5)), spreadMS(s.addTTFT)
				}
				rss := peakRSSMB(s.t.pid)
				rowsByTarget[j] = append(rowsByTarget[j], []string{sz.name, share, sc.label, s.t.name, strconv.Itoa(len(s.pooled.lat)),
					msf(pct(s.pooled.lat, .5)), msf(pct(s.pooled.lat, .99)), spreadMS(s.addP50), spreadMS(s.addP99),
					ttft, addTTFT, spreadUS(s.cpuPerReq), throttled, fmt.Sprintf("%.1f", rss), strconv.Itoa(s.pooled.errs)})
				if s.pooled.errs > 0 {
					b.notes = append(b.notes, fmt.Sprintf("%s / %s: %d failed requests", label(sc.label), s.t.name, s.pooled.errs))
				}
			}
			s, p := st[2], st[1]
			f := cost.Figure{Platform: sz.platform, MemoryMB: sz.memoryMB, VCPU: sz.cpu, Concurrency: sz.conc, Scenario: sc.cost,
				CPUMicros: median(s.cpuPerReq), AddedMs: ms(median(s.addP50)), AddedP99Ms: ms(median(s.addP99)),
				ColdStartMs: coldMs, PeakRSSMB: peakRSSMB(pid),
				ProxyCPUMicros: median(p.cpuPerReq), ProxyAddedMs: ms(median(p.addP50))}
			f.AddedSpreadMs, f.AddedP99SpreadMs = spread(s.addP50), spread(s.addP99)
			if sc.stream {
				f.AddedTTFTMs, f.AddedTTFTSpreadMs = ms(median(s.addTTFT)), spread(s.addTTFT)
			}
			measured.Figures = append(measured.Figures, f)
		}
		px.Stop()
		_ = pg.remove()
		gw.Stop()
		if err := g.remove(); err != nil {
			return err
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %d CPUs, %s/%s, %s; load average %s before the run, %s after. CPU quota: cgroup %s, period %v, around the gateway process alone (and the proxy in a group of its own). %d rounds of %v per target, targets interleaved; the run took %v.\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), loadBefore, loadAvg(), version, cpuPeriod, opt.rounds, opt.phase, time.Since(started).Round(time.Second))
	out.WriteString("\"Added\" is a target's figure minus the direct upstream's in the same round, median of the rounds (min..max). The gateway's rows come first, then the floor's: a bare httputil.ReverseProxy under the same quota in a group of its own. TTFT is the time to the first content chunk; CPU is the process's time on a CPU per request (the scheduler's run time of its threads); throttled is the share of CFS periods in which it ran out of quota; peak RSS is VmHWM over the scenario. n is the target's requests over all rounds: with few, p99 is the slowest of them.\n\n")
	rows := slices.Concat(rowsByTarget[2], rowsByTarget[1])
	table(&out, []string{"Size", "CPU quota", "Scenario", "Target", "n", "p50 ms", "p99 ms", "added p50 ms", "added p99 ms", "TTFT p50 ms", "added TTFT p50 ms", "CPU us/req", "throttled", "peak RSS MB", "failed"}, rows)
	if len(coldRows) > 0 {
		out.WriteString("\nCold start under the quota: exec of the local server to the first byte of its first answer (a chat stream through the fake upstream), median (min..max); RSS when that byte arrived.\n\n")
		table(&out, []string{"Size", "CPU quota", "cold start ms", "RSS MB", "runs"}, coldRows)
	}
	for _, n := range b.notes {
		out.WriteString("\nNote: " + n + "\n")
	}
	fmt.Print(out.String())
	if opt.out != "" {
		if err := os.WriteFile(opt.out, []byte(out.String()), 0o644); err != nil {
			return err
		}
	}
	if so.json != "" {
		j, err := json.MarshalIndent(measured, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(so.json, append(j, '\n'), 0o644)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// spread is max - min in milliseconds.
func spread(v []time.Duration) float64 {
	if len(v) == 0 {
		return 0
	}
	return ms(slices.Max(v) - slices.Min(v))
}

// sizeScenario is one of the bench's loads, run at every size.
type sizeScenario struct {
	label  string
	wire   wire
	model  string
	stream bool
	cost   string // the scenario's name in core/cost, when the cost model takes it
}

// sizeScenarios are the loads run at every size. Embeddings run only at concurrency 1: a
// batch of 16 float vectors is milliseconds of CPU, so 80 at once would be the autoscaler's
// business (it adds instances at 60% CPU), and the cost model packs them by CPU instead.
func sizeScenarios(conc int) []sizeScenario {
	f := func(s string) string { return fmt.Sprintf("%s, %d in flight", s, conc) }
	scs := []sizeScenario{
		{f("chat, non-stream"), chatWire, "bench/openai", false, cost.ScenarioChat},
		{f("chat, 200-chunk stream"), chatWire, "bench/openai", true, cost.ScenarioChatStream},
		{f("messages (Anthropic route, pass-through), non-stream"), messagesWire, "bench/anthropic", false, cost.ScenarioMessages},
		{f("messages (Anthropic route, pass-through), 200-event stream"), messagesWire, "bench/anthropic", true, cost.ScenarioMessagesStream},
		{f("responses (OpenAI route, pass-through), non-stream"), responsesWire, "bench/responses", false, cost.ScenarioResponses},
		{f("responses (OpenAI route, pass-through), 200-event stream"), responsesWire, "bench/responses", true, cost.ScenarioResponsesStream},
	}
	if conc == 1 {
		scs = append(scs, sizeScenario{f("embeddings, batch of 16 x 1536, float"), embedWire, "bench/embed", false, cost.ScenarioEmbeddings})
	}
	return scs
}

// coldStart starts a fresh gateway inside g and times its first answer from the exec.
func coldStart(self string, g *cgroup, tmp, gwBin, cfg string) (time.Duration, float64, error) {
	reserved, err := loopback.Reserve()
	if err != nil {
		return 0, 0, err
	}
	defer reserved.Release()
	stamp := filepath.Join(tmp, "exec.stamp")
	_ = os.Remove(stamp)
	gw, err := startInCgroup(self, g, filepath.Join(tmp, "gateway-cold.log"), stamp, gwBin, "-config", cfg, "-addr", reserved.Addr(), "-route-state", "off")
	if err != nil {
		return 0, 0, err
	}
	defer gw.Stop()
	body := chatWire.body("bench/openai", true)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		c, err := net.Dial("tcp", reserved.Addr())
		if err != nil {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		buf := make([]byte, 12)
		_, err = io.ReadFull(c, buf)
		at := time.Now()
		rss := rssMB(gw.Cmd.Process.Pid)
		c.Close()
		if err != nil {
			return 0, 0, err
		}
		if string(buf[9:12]) != "200" {
			return 0, 0, fmt.Errorf("status %q", buf)
		}
		s, err := os.ReadFile(stamp)
		if err != nil {
			return 0, 0, fmt.Errorf("the wrapper's exec time: %w", err)
		}
		ns, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		return at.Sub(time.Unix(0, ns)), rss, nil
	}
	return 0, 0, errors.New("the gateway did not listen within 30s")
}
