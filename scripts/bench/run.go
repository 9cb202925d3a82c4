package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/scripts/internal/proc"
)

const prompt = "Summarise the plot of a long novel in one hundred and fifty words, please."

// wire is a front door's request body and the line that ends its streams properly.
type wire struct {
	path string // the door's path, on the gateway and on the upstream alike
	body func(model string, stream bool) string
	done []byte
}

func streamField(stream bool) string {
	if stream {
		return `,"stream":true`
	}
	return ""
}

var (
	chatWire = wire{"/v1/chat/completions", func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":%q}]%s}`, model, prompt, streamField(stream))
	}, []byte("data: [DONE]")}
	completionsWire = wire{"/v1/completions", func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":300%s}`, model, prompt, streamField(stream))
	}, []byte("data: [DONE]")}
	messagesWire = wire{"/v1/messages", func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"max_tokens":1024,"system":"You are a terse assistant.","messages":[{"role":"user","content":%q}]%s}`, model, prompt, streamField(stream))
	}, []byte("event: message_stop")}
	responsesWire = wire{"/v1/responses", func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"instructions":"You are a terse assistant.","input":%q,"store":false%s}`, model, prompt, streamField(stream))
	}, []byte("event: response.completed")}
	// embedWire is a batch of embedInputs texts of about ten words, as openai-go sends it;
	// embed64Wire asks for base64, as the Python and Node SDKs do unless told otherwise.
	embedWire   = wire{"/v1/embeddings", func(model string, _ bool) string { return embedBody(model, "float") }, nil}
	embed64Wire = wire{"/v1/embeddings", func(model string, _ bool) string { return embedBody(model, "base64") }, nil}
	// limitsWire is chat with the output maximum a priced model requires.
	limitsWire = wire{"/v1/chat/completions", func(model string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"max_completion_tokens":300,"messages":[{"role":"user","content":%q}]%s}`, model, prompt, streamField(stream))
	}, []byte("data: [DONE]")}
)

func embedBody(model, format string) string {
	texts := make([]string, embedInputs)
	for i := range texts {
		texts[i] = fmt.Sprintf(`"passage %d of the corpus, a sentence of about ten words"`, i)
	}
	return `{"model":"` + model + `","input":[` + strings.Join(texts, ",") + `],"encoding_format":"` + format + `"}`
}

// wires are the load mode's wires by name.
var wires = map[string]wire{"chat": chatWire, "completions": completionsWire, "messages": messagesWire, "responses": responsesWire, "embeddings": embedWire}

type target struct {
	name  string
	base  string // http://host:port
	model string
	pid   int // process whose CPU is charged to this target (0: none)
	wire  wire
	key   string // the gateway key sent as a bearer token, when set
}

func (t target) url() string { return t.base + t.wire.path }

// result is one round of one target.
type result struct {
	lat, ttft []time.Duration
	errs      int
	elapsed   time.Duration
	cpu       time.Duration
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

func msf(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

// closedLoop keeps conc requests in flight for dur and records each one's latency and, for
// streams, its time to the first content chunk. With a gap, each of the conc clients waits
// that long between its requests (not counted in any latency): an environment that is idle
// between requests, as a function is while its upstream thinks.
func closedLoop(client *http.Client, t target, conc int, dur time.Duration, stream bool, gap time.Duration) result {
	payload := t.wire.body(t.model, stream)
	unique := strings.Contains(payload, requestMarker)
	cpu0 := cpuTime(t.pid)
	start := time.Now()
	deadline := start.Add(dur)
	var mu sync.Mutex
	var res result
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat, ttft []time.Duration
			errs := 0
			for time.Now().Before(deadline) {
				p := payload
				if unique {
					p = strings.Replace(payload, requestMarker, strconv.FormatInt(requestSeq.Add(1), 10), 1)
				}
				l, f, err := oneRequest(client, t.url(), t.key, p, stream, t.wire.done)
				if err != nil {
					errs++
					continue
				}
				lat = append(lat, l)
				if stream {
					ttft = append(ttft, f)
				}
				if gap > 0 {
					time.Sleep(gap)
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.ttft = append(res.ttft, ttft...)
			res.errs += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.cpu = cpuTime(t.pid) - cpu0
	return res
}

var tokMarker = []byte("tok")

// requestMarker in a wire's body is replaced by a number no other request of the run has, so
// that each request is a new one (a response cache's miss).
const requestMarker = "{request}"

var requestSeq atomic.Int64

func oneRequest(client *http.Client, url, key, payload string, stream bool, doneLine []byte) (time.Duration, time.Duration, error) {
	t0 := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(payload))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01") // read only by the Messages door
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return 0, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	if !stream {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, 0, err
		}
		return time.Since(t0), 0, nil
	}
	br := bufio.NewReaderSize(resp.Body, 32<<10)
	var first time.Duration
	done := false
	for {
		line, err := br.ReadSlice('\n')
		if first == 0 && bytes.Contains(line, tokMarker) {
			first = time.Since(t0)
		}
		if bytes.HasPrefix(line, doneLine) {
			done = true
		}
		if err != nil {
			break
		}
	}
	if !done || first == 0 {
		return 0, 0, fmt.Errorf("incomplete stream")
	}
	return time.Since(t0), first, nil
}

// preciseCPU makes cpuTime sum the scheduler's nanosecond run time of the process's threads
// instead of reading its 10 ms ticks: -sizes counts a few requests per cell, too few for ticks.
var preciseCPU bool

// cpuTime is the user+system CPU a process has used (Linux /proc; 0 elsewhere).
func cpuTime(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	if preciseCPU {
		if d, ok := schedCPU(pid); ok {
			return d
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are fields 14 and 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(u+st) * time.Second / clkTck
}

// schedCPU sums the first field of /proc/PID/task/*/schedstat, each thread's time on a CPU in
// nanoseconds. Threads that have exited are not counted; the Go runtime keeps its threads.
func schedCPU(pid int) (time.Duration, bool) {
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(dirs) == 0 {
		return 0, false
	}
	var sum int64
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += n
	}
	return time.Duration(sum), true
}

func rssMB(pid int) float64 { return statusMB(pid, "VmRSS") }

// statusMB is a kB field of /proc/PID/status in MB.
func statusMB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// loadAvg is the machine's 1-, 5- and 15-minute load, as uptime prints it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

const gatewayConfig = `
auth: none
limits: {max_in_flight: 5000}
connections:
  up: {kind: openai-compatible, base_url: "http://%[1]s/v1"}
  openai: {kind: openai, api_key: bench-key-not-secret, base_url: "http://%[1]s/v1"}
  claude: {kind: anthropic, api_key: bench-key-not-secret, base_url: "http://%[1]s"}
  hold: {kind: openai-compatible, base_url: "http://%[2]s/v1"}
models:
  bench/openai: {routes: [{connection: up, model: bench}]}
  bench/responses: {routes: [{connection: openai, model: bench}]}
  bench/anthropic: {max_output_tokens: 1024, routes: [{connection: claude, model: bench}]}
  bench/hold: {routes: [{connection: hold, model: bench}]}
  bench/embed: {kind: embedding, dimensions: 1536, routes: [{connection: up, model: bench}]}
  bench/embed-openai: {kind: embedding, dimensions: 1536, routes: [{connection: openai, model: bench}]}
`

// limitsConfig is the gateway of the limits comparison: a priced model and two keys.
const limitsConfig = `
limits: {max_in_flight: 5000}
keys:
  - {name: off, value: bench-key-limits-off}
  - name: on
    value: bench-key-limits-on
    rate: {requests_per_minute: 1000000000, tokens_per_minute: 1000000000000}
    budget: {usd_per_day: 1000000, usd_per_month: 1000000}
counters: {store: memory}
connections:
  up: {kind: openai-compatible, base_url: "http://%s/v1"}
models:
  bench/priced: {price: {input_per_mtok: 1, output_per_mtok: 1}, routes: [{connection: up, model: bench}]}
`

func writeConfig(dir, name, cfg string) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		panic(err)
	}
	return path
}

// options are the run's flags.
type options struct {
	out       string
	only      *regexp.Regexp // scenarios whose label matches; nil: all
	baseline  string         // a git revision whose gateway runs beside this checkout's
	profile   string         // a directory for a CPU profile of the gateway per scenario
	rounds    int
	phase     time.Duration
	rssStream int
}

// scenario is one load, run on its targets in interleaved rounds. The first target is the
// reference that "added" is measured from (the direct upstream, or the gateway's
// pass-through route for a translation).
type scenario struct {
	label   string
	conc    int
	stream  bool
	targets []target
}

// stats is one target's figures over the rounds of a scenario.
type stats struct {
	t                target
	pooled           result
	p50, p99, ttft50 []time.Duration // per round
	cpuPerReq        []float64       // per round, microseconds
	rps              []float64
	addP50, addP99   []time.Duration // per round, over the reference's same round
	addTTFT          []time.Duration
}

func median[T int64 | float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread renders the median of per-round values with their range: a reader can tell noise
// (a wide range) from a change (ranges that do not overlap).
func spreadMS(v []time.Duration) string {
	if len(v) == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s..%s)", msf(median(v)), msf(slices.Min(v)), msf(slices.Max(v)))
}

func spreadUS(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f (%.0f..%.0f)", median(v), slices.Min(v), slices.Max(v))
}

type bench struct {
	opt     options
	client  *http.Client
	rows    [][]string
	ratios  [][]string
	notes   []string
	results map[string][]*stats // by scenario label
	gwDebug string              // the gateway's debug address, for profiles
	gwPID   int
	gap     time.Duration // between one client's requests (see closedLoop)
}

func (b *bench) measure(sc scenario) []*stats {
	if b.opt.only != nil && !b.opt.only.MatchString(sc.label) {
		return nil
	}
	fmt.Fprintf(os.Stderr, "%s...\n", sc.label)
	st := make([]*stats, len(sc.targets))
	for i, t := range sc.targets {
		st[i] = &stats{t: t}
		closedLoop(b.client, t, min(sc.conc, 4), 100*time.Millisecond, sc.stream, 0) // warm connections
	}
	for range b.opt.rounds {
		round := make([]result, len(sc.targets))
		for i, t := range sc.targets {
			round[i] = closedLoop(b.client, t, sc.conc, b.opt.phase, sc.stream, b.gap)
		}
		for i, r := range round {
			s := st[i]
			s.pooled.lat = append(s.pooled.lat, r.lat...)
			s.pooled.ttft = append(s.pooled.ttft, r.ttft...)
			s.pooled.errs += r.errs
			s.pooled.elapsed += r.elapsed
			s.pooled.cpu += r.cpu
			s.p50 = append(s.p50, pct(r.lat, .5))
			s.p99 = append(s.p99, pct(r.lat, .99))
			s.rps = append(s.rps, float64(len(r.lat))/r.elapsed.Seconds())
			if s.t.pid != 0 && len(r.lat) > 0 {
				s.cpuPerReq = append(s.cpuPerReq, float64(r.cpu)/1e3/float64(len(r.lat)))
			}
			if sc.stream {
				s.ttft50 = append(s.ttft50, pct(r.ttft, .5))
			}
			if i > 0 {
				s.addP50 = append(s.addP50, pct(r.lat, .5)-pct(round[0].lat, .5))
				s.addP99 = append(s.addP99, pct(r.lat, .99)-pct(round[0].lat, .99))
				if sc.stream {
					s.addTTFT = append(s.addTTFT, pct(r.ttft, .5)-pct(round[0].ttft, .5))
				}
			}
		}
	}
	for _, s := range st {
		if sc.stream {
			b.row(sc.label+", time to first token", s, s.pooled.ttft, s.addTTFT, nil)
		}
	}
	for _, s := range st {
		label := sc.label
		if sc.stream {
			label += ", whole stream"
		}
		b.row(label, s, s.pooled.lat, s.addP50, s.addP99)
		if s.pooled.errs > 0 {
			b.notes = append(b.notes, fmt.Sprintf("%s / %s: %d failed requests", sc.label, s.t.name, s.pooled.errs))
		}
	}
	b.results[sc.label] = st
	b.profileScenario(sc)
	return st
}

func (b *bench) row(label string, s *stats, d []time.Duration, add50, add99 []time.Duration) {
	rps := float64(len(s.pooled.lat)) / s.pooled.elapsed.Seconds()
	b.rows = append(b.rows, []string{label, s.t.name, msf(pct(d, .5)), msf(pct(d, .99)), strconv.FormatFloat(rps, 'f', 0, 64),
		spreadMS(add50), spreadMS(add99), spreadUS(s.cpuPerReq), strconv.Itoa(s.pooled.errs)})
}

// profileScenario records the gateway's CPU profile while it alone carries the scenario's
// load (on its first target that is a gateway of this checkout).
func (b *bench) profileScenario(sc scenario) {
	if b.opt.profile == "" {
		return
	}
	for _, t := range sc.targets {
		if t.pid != b.gwPID {
			continue
		}
		slug := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(sc.label), "-"), "-")
		path := filepath.Join(b.opt.profile, slug+".pprof")
		done := make(chan error, 1)
		go func() { done <- fetch("http://"+b.gwDebug+"/debug/pprof/profile?seconds=3", path) }()
		closedLoop(b.client, t, sc.conc, 3200*time.Millisecond, sc.stream, 0)
		if err := <-done; err != nil {
			b.notes = append(b.notes, "profile of "+sc.label+": "+err.Error())
		}
		return
	}
}

func fetch(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// ratio adds a line to the goals table: the gateway's figures over the reference's.
func (b *bench) ratio(what, label, of, over string, pick func(*stats) float64) {
	st := b.results[label]
	var x, y *stats
	for _, s := range st {
		if s.t.name == of {
			x = s
		}
		if s.t.name == over {
			y = s
		}
	}
	if x == nil || y == nil {
		return
	}
	a, c := pick(x), pick(y)
	r := "n/a"
	if c > 0 {
		r = fmt.Sprintf("%.2fx", a/c)
	}
	b.ratios = append(b.ratios, []string{what, over, strconv.FormatFloat(c, 'f', 3, 64), of, strconv.FormatFloat(a, 'f', 3, 64), r})
}

func run(opt options) error {
	tmp, err := os.MkdirTemp("", "fngate-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if opt.profile != "" {
		if err := os.MkdirAll(opt.profile, 0o755); err != nil {
			return err
		}
	}
	loadBefore := loadAvg()

	fmt.Fprintln(os.Stderr, "building the local server...")
	gwBin, err := proc.BuildLocal(tmp)
	if err != nil {
		return err
	}
	var baseBin string
	if opt.baseline != "" {
		fmt.Fprintf(os.Stderr, "building the local server at %s...\n", opt.baseline)
		if baseBin, err = proc.BuildLocalAt(tmp, opt.baseline); err != nil {
			return err
		}
	}

	upAddr, holdAddr, proxyAddr, holdProxyAddr, gwAddr, gwDebug := proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr()
	up, err := proc.Start("upstream", "", self, "-mode", "upstream", "-addr", upAddr)
	if err != nil {
		return err
	}
	defer up.Stop()
	holdUp, err := proc.Start("upstream-hold", "", self, "-mode", "upstream", "-addr", holdAddr, "-hold", "50ms")
	if err != nil {
		return err
	}
	defer holdUp.Stop()
	proxy, err := proc.Start("proxy", "", self, "-mode", "proxy", "-addr", proxyAddr, "-target", "http://"+upAddr)
	if err != nil {
		return err
	}
	defer proxy.Stop()
	holdProxy, err := proc.Start("proxy-hold", "", self, "-mode", "proxy", "-addr", holdProxyAddr, "-target", "http://"+holdAddr)
	if err != nil {
		return err
	}
	defer holdProxy.Stop()
	cfg := writeConfig(tmp, "bench.yaml", fmt.Sprintf(gatewayConfig, upAddr, holdAddr))
	// Logs go to a file, as they go to a pipe on the platforms: their cost is in the figures.
	gw, err := proc.Start("gateway", filepath.Join(tmp, "gateway.log"), gwBin, "-config", cfg, "-addr", gwAddr, "-debug-addr", gwDebug, "-route-state", "off")
	if err != nil {
		return err
	}
	defer gw.Stop()
	var base *proc.Process
	baseAddr := proc.FreeAddr()
	if baseBin != "" {
		if base, err = proc.Start("gateway-baseline", filepath.Join(tmp, "gateway-baseline.log"), baseBin, "-config", cfg, "-addr", baseAddr, "-route-state", "off"); err != nil {
			return err
		}
		defer base.Stop()
	}
	// Building can take minutes on a busy machine; the processes then get 30 s to listen.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range []string{upAddr, holdAddr, proxyAddr, holdProxyAddr, gwAddr} {
		if err := proc.WaitListening(ctx, a); err != nil {
			return err
		}
	}
	if base != nil {
		if err := proc.WaitListening(ctx, baseAddr); err != nil {
			return err
		}
	}

	b := &bench{opt: opt, results: map[string][]*stats{}, gwDebug: gwDebug, gwPID: gw.Cmd.Process.Pid,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxIdleConns: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}}}
	baseName := "fngate@" + opt.baseline
	// floor is direct, the bare proxy, the gateway and (with -baseline) the gateway before.
	floor := func(w wire, model string) []target {
		ts := []target{
			{"direct", "http://" + upAddr, "bench", 0, w, ""},
			{"reverse proxy", "http://" + proxyAddr, "bench", proxy.Cmd.Process.Pid, w, ""},
			{"fngate", "http://" + gwAddr, model, gw.Cmd.Process.Pid, w, ""},
		}
		if base != nil {
			ts = append(ts, target{baseName, "http://" + baseAddr, model, base.Cmd.Process.Pid, w, ""})
		}
		return ts
	}
	// translation sets the gateway's pass-through route beside a translated one.
	translation := func(w wire) []target {
		ts := []target{
			{"fngate, OpenAI-wire route", "http://" + gwAddr, "bench/openai", gw.Cmd.Process.Pid, w, ""},
			{"fngate, Anthropic route", "http://" + gwAddr, "bench/anthropic", gw.Cmd.Process.Pid, w, ""},
		}
		if base != nil {
			ts = append(ts, target{baseName + ", Anthropic route", "http://" + baseAddr, "bench/anthropic", base.Cmd.Process.Pid, w, ""})
		}
		return ts
	}

	for _, c := range []int{1, 16, 64} {
		b.measure(scenario{fmt.Sprintf("chat, non-stream, %d in flight", c), c, false, floor(chatWire, "bench/openai")})
	}
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("chat, 200-chunk stream, %d in flight", c), c, true, floor(chatWire, "bench/openai")})
	}
	b.measure(scenario{"completions, non-stream, 16 in flight", 16, false, floor(completionsWire, "bench/openai")})
	b.measure(scenario{"completions, 200-chunk stream, 16 in flight", 16, true, floor(completionsWire, "bench/openai")})
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("messages (Anthropic route, pass-through), non-stream, %d in flight", c), c, false, floor(messagesWire, "bench/anthropic")})
		b.measure(scenario{fmt.Sprintf("messages (Anthropic route, pass-through), 200-event stream, %d in flight", c), c, true, floor(messagesWire, "bench/anthropic")})
	}
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("responses (OpenAI route, pass-through), non-stream, %d in flight", c), c, false, floor(responsesWire, "bench/responses")})
		b.measure(scenario{fmt.Sprintf("responses (OpenAI route, pass-through), 200-event stream, %d in flight", c), c, true, floor(responsesWire, "bench/responses")})
	}
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("translation: chat door, OpenAI-wire vs Anthropic route, 200-chunk stream, %d in flight", c), c, true, translation(chatWire)})
	}
	b.measure(scenario{"translation: chat door, OpenAI-wire vs Anthropic route, non-stream, 16 in flight", 16, false, translation(chatWire)})

	// Embeddings: a batch of 16 texts, 1,536 dimensions, answered as decimals (about 600 KB).
	// Through the proxy the upstream's bytes pass as they are; the gateway reads every number
	// and writes it again, from decimals (an OpenAI-compatible route) or from the base64 it
	// asks OpenAI for.
	for _, c := range []int{1, 16} {
		ts := floor(embedWire, "bench/embed")
		ts = append(ts, target{"fngate, OpenAI route (base64 upstream)", "http://" + gwAddr, "bench/embed-openai", gw.Cmd.Process.Pid, embedWire, ""})
		b.measure(scenario{fmt.Sprintf("embeddings, batch of 16 x 1536, float, %d in flight", c), c, false, ts})
		b.measure(scenario{fmt.Sprintf("embeddings, batch of 16 x 1536, base64, %d in flight", c), c, false, floor(embed64Wire, "bench/embed-openai")})
	}

	if err := b.limits(tmp, gwBin, upAddr); err != nil {
		return err
	}
	if err := b.keys(tmp, gwBin, upAddr); err != nil {
		return err
	}
	if err := b.cache(tmp, gwBin, upAddr, holdAddr); err != nil {
		return err
	}
	if err := b.guardrails(tmp, gwBin, self, upAddr); err != nil {
		return err
	}

	rss, proxyRSS := 0.0, 0.0
	if opt.rssStream > 0 {
		fmt.Fprintf(os.Stderr, "%d open streams...\n", opt.rssStream)
		rss = openStreams(b.client, "http://"+gwAddr+chatWire.path, "bench/hold", opt.rssStream, gw.Cmd.Process.Pid)
		proxyRSS = openStreams(b.client, "http://"+holdProxyAddr+chatWire.path, "bench", opt.rssStream, holdProxy.Cmd.Process.Pid)
	}
	b.goals()

	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %d CPUs, %s/%s, %s; load average %s before the run, %s after. %d rounds of %v per target, targets interleaved.\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), loadBefore, loadAvg(), opt.rounds, opt.phase)
	out.WriteString("Cells with a range are the median of the rounds' figures (min..max over the rounds); \"added\" is a round's figure minus the reference's (the first target of the scenario) in the same round.\n\n")
	table(&out, []string{"Scenario", "Target", "p50 ms", "p99 ms", "req/s", "added p50 ms", "added p99 ms", "CPU us/req", "failed"}, b.rows)
	if len(b.ratios) > 0 {
		out.WriteString("\nGoals: the gateway's figure over the reference's, medians of the rounds.\n\n")
		table(&out, []string{"Figure", "Reference", "", "Target", "", "Ratio"}, b.ratios)
	}
	if opt.rssStream > 0 {
		fmt.Fprintf(&out, "\nRSS with %d concurrent open streams (the upstream pausing 50 ms between chunks): fngate %.1f MB, reverse proxy %.1f MB.\n", opt.rssStream, rss, proxyRSS)
	}
	for _, n := range b.notes {
		out.WriteString("\nNote: " + n + "\n")
	}
	fmt.Print(out.String())
	if opt.out != "" {
		return os.WriteFile(opt.out, []byte(out.String()), 0o644)
	}
	return nil
}

func table(out *strings.Builder, head []string, rows [][]string) {
	out.WriteString("| " + strings.Join(head, " | ") + " |\n")
	out.WriteString(strings.Repeat("|---", len(head)) + "|\n")
	for _, r := range rows {
		out.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// goals fills the ratio table of the goals from the scenarios that ran.
func (b *bench) goals() {
	added50 := func(s *stats) float64 { return float64(median(s.addP50)) / 1e6 }
	added99 := func(s *stats) float64 { return float64(median(s.addP99)) / 1e6 }
	addTTFT := func(s *stats) float64 { return float64(median(s.addTTFT)) / 1e6 }
	cpu := func(s *stats) float64 { return median(s.cpuPerReq) }
	rps := func(s *stats) float64 { return median(s.rps) }
	others := []string{"fngate"}
	if b.opt.baseline != "" {
		others = append(others, "fngate@"+b.opt.baseline)
	}
	for _, of := range others {
		for _, c := range []int{1, 16, 64} {
			l := fmt.Sprintf("chat, non-stream, %d in flight", c)
			b.ratio(fmt.Sprintf("added p50 ms, non-stream, %d in flight", c), l, of, "reverse proxy", added50)
			b.ratio(fmt.Sprintf("added p99 ms, non-stream, %d in flight", c), l, of, "reverse proxy", added99)
		}
		for _, c := range []int{1, 16} {
			b.ratio(fmt.Sprintf("added TTFT p50 ms, %d in flight", c), fmt.Sprintf("chat, 200-chunk stream, %d in flight", c), of, "reverse proxy", addTTFT)
		}
		b.ratio("CPU us per non-stream request, 16 in flight", "chat, non-stream, 16 in flight", of, "reverse proxy", cpu)
		for _, c := range []int{1, 16} {
			b.ratio(fmt.Sprintf("CPU us per 200-chunk stream, %d in flight", c), fmt.Sprintf("chat, 200-chunk stream, %d in flight", c), of, "reverse proxy", cpu)
		}
		b.ratio("req/s, non-stream, 64 in flight", "chat, non-stream, 64 in flight", of, "reverse proxy", rps)
		for _, c := range []int{1, 16} {
			for _, enc := range []string{"float", "base64"} {
				l := fmt.Sprintf("embeddings, batch of 16 x 1536, %s, %d in flight", enc, c)
				b.ratio("CPU us/req, "+l, l, of, "reverse proxy", cpu)
				b.ratio("added p50 ms, "+l, l, of, "reverse proxy", added50)
			}
		}
		for _, door := range []string{"completions", "messages (Anthropic route, pass-through)", "responses (OpenAI route, pass-through)"} {
			for _, l := range []string{door + ", non-stream, 16 in flight", door + ", 200-chunk stream, 16 in flight", door + ", 200-event stream, 16 in flight"} {
				b.ratio("CPU us/req, "+l, l, of, "reverse proxy", cpu)
			}
			b.ratio("added p50 ms, "+door+", non-stream, 16 in flight", door+", non-stream, 16 in flight", of, "reverse proxy", added50)
		}
	}
	for _, c := range []int{1, 16} {
		l := fmt.Sprintf("translation: chat door, OpenAI-wire vs Anthropic route, 200-chunk stream, %d in flight", c)
		b.ratio(fmt.Sprintf("CPU us per stream, Anthropic route over OpenAI-wire route, %d in flight", c), l, "fngate, Anthropic route", "fngate, OpenAI-wire route", cpu)
	}
	b.ratio("CPU us per non-stream request, Anthropic route over OpenAI-wire route, 16 in flight", "translation: chat door, OpenAI-wire vs Anthropic route, non-stream, 16 in flight", "fngate, Anthropic route", "fngate, OpenAI-wire route", cpu)
}

// limits runs a second gateway process with two keys on one priced model, one key without
// limits and one held to a rate limit and a budget on the memory store, so the difference is
// the limiter alone (admission, the attempt's charge, the settlement).
func (b *bench) limits(tmp, gwBin, upAddr string) error {
	if b.opt.only != nil && !b.opt.only.MatchString("limits") {
		return nil
	}
	limAddr := proc.FreeAddr()
	lim, err := proc.Start("gateway-limits", filepath.Join(tmp, "gateway-limits.log"), gwBin, "-config", writeConfig(tmp, "limits.yaml", fmt.Sprintf(limitsConfig, upAddr)), "-addr", limAddr, "-route-state", "off")
	if err != nil {
		return err
	}
	defer lim.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := proc.WaitListening(ctx, limAddr); err != nil {
		return err
	}
	ts := []target{{"direct", "http://" + upAddr, "bench", 0, limitsWire, ""},
		{"fngate, limits off", "http://" + limAddr, "bench/priced", lim.Cmd.Process.Pid, limitsWire, "bench-key-limits-off"},
		{"fngate, limits on (memory)", "http://" + limAddr, "bench/priced", lim.Cmd.Process.Pid, limitsWire, "bench-key-limits-on"},
	}
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("limits off vs on, non-stream, %d in flight", c), c, false, ts})
	}
	b.measure(scenario{"limits off vs on, 200-chunk stream, 1 in flight", 1, true, ts})
	return nil
}

// openStreams holds n streams open through url (the upstream pauses between chunks) and
// reads the RSS of pid once every stream has delivered its first chunk.
func openStreams(client *http.Client, url, model string, n, pid int) float64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ready sync.WaitGroup
	ready.Add(n)
	payload := chatWire.body(model, true)
	for range n {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(payload))
			resp, err := client.Do(req)
			if err != nil {
				ready.Done()
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			signalled := false
			for {
				line, err := br.ReadSlice('\n')
				if !signalled && bytes.Contains(line, tokMarker) {
					ready.Done()
					signalled = true
				}
				if err != nil {
					if !signalled {
						ready.Done()
					}
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { ready.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
	time.Sleep(200 * time.Millisecond)
	return rssMB(pid)
}
