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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fngate/fngate/scripts/internal/proc"
)

const chatBody = `{"model":"%s","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Summarise the plot of a long novel in one hundred and fifty words, please."}]%s}`

func body(model string, stream bool) string {
	extra := ""
	if stream {
		extra = `,"stream":true`
	}
	return fmt.Sprintf(chatBody, model, extra)
}

// messagesBody is the same request on Anthropic's Messages wire.
const messagesBody = `{"model":"%s","max_tokens":1024,"system":"You are a terse assistant.","messages":[{"role":"user","content":"Summarise the plot of a long novel in one hundred and fifty words, please."}]%s}`

type target struct {
	name  string
	url   string
	model string
	pid   int    // process whose CPU is charged to this target (0: none)
	wire  wire   // the request and stream format; chat when zero
	key   string // the gateway key sent as a bearer token, when set
}

// wire is a front door's request body and the line that ends its streams properly.
type wire struct {
	body func(model string, stream bool) string
	done []byte
}

// embedBody is a batch of embedInputs texts of about ten words, as openai-go sends it.
func embedBody(model string, _ bool) string {
	texts := make([]string, embedInputs)
	for i := range texts {
		texts[i] = fmt.Sprintf(`"passage %d of the corpus, a sentence of about ten words"`, i)
	}
	return `{"model":"` + model + `","input":[` + strings.Join(texts, ",") + `],"encoding_format":"float"}`
}

var (
	embedWire   = wire{body: embedBody}
	embed64Wire = wire{body: func(model string, _ bool) string {
		return strings.Replace(embedBody(model, false), `"encoding_format":"float"`, `"encoding_format":"base64"`, 1)
	}}
	chatWire     = wire{body: body, done: []byte("data: [DONE]")}
	messagesWire = wire{body: func(model string, stream bool) string {
		extra := ""
		if stream {
			extra = `,"stream":true`
		}
		return fmt.Sprintf(messagesBody, model, extra)
	}, done: []byte("event: message_stop")}
)

func (t target) payload(stream bool) string {
	if t.wire.body == nil {
		return body(t.model, stream)
	}
	return t.wire.body(t.model, stream)
}

func (t target) doneLine() []byte {
	if t.wire.done == nil {
		return chatWire.done
	}
	return t.wire.done
}

type result struct {
	lat, ttft []time.Duration
	errs      int
	elapsed   time.Duration
	cpu       time.Duration
}

func (r *result) add(o result) {
	r.lat = append(r.lat, o.lat...)
	r.ttft = append(r.ttft, o.ttft...)
	r.errs += o.errs
	r.elapsed += o.elapsed
	r.cpu += o.cpu
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func msf(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

// closedLoop keeps conc requests in flight for dur and records each one's latency (and, for
// streams, time to the first content chunk).
func closedLoop(client *http.Client, t target, conc int, dur time.Duration, stream bool) result {
	payload := t.payload(stream)
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
				l, f, err := oneRequest(client, t.url, t.key, payload, stream, t.doneLine())
				if err != nil {
					errs++
					continue
				}
				lat = append(lat, l)
				if stream {
					ttft = append(ttft, f)
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

// cpuTime is the user+system CPU a process has used (Linux /proc; 0 elsewhere).
func cpuTime(pid int) time.Duration {
	if pid == 0 {
		return 0
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

func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

const gatewayConfig = `
auth: none
limits: {max_in_flight: 5000}
connections:
  up: {kind: openai-compatible, base_url: "http://%[1]s/v1"}
  claude: {kind: anthropic, api_key: bench-key-not-secret, base_url: "http://%[1]s"}
  hold: {kind: openai-compatible, base_url: "http://%[2]s/v1"}
  oai: {kind: openai, api_key: bench-key-not-secret, base_url: "http://%[1]s/v1"}
models:
  bench/openai: {routes: [{connection: up, model: bench}]}
  bench/anthropic: {max_output_tokens: 1024, routes: [{connection: claude, model: bench}]}
  bench/hold: {routes: [{connection: hold, model: bench}]}
  bench/embed: {kind: embedding, dimensions: 1536, routes: [{connection: up, model: bench}]}
  bench/embed-openai: {kind: embedding, dimensions: 1536, routes: [{connection: oai, model: bench}]}
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

type table struct {
	rows  [][]string
	notes []string
}

func (t *table) add(cols ...string) { t.rows = append(t.rows, cols) }

func run(quick bool, out, only, baseline string) error {
	switch only {
	case "", "embeddings":
	default:
		return fmt.Errorf("unknown scenario %q: the one -only knows is embeddings", only)
	}
	embedOnly := only == "embeddings"
	tmp, err := os.MkdirTemp("", "fngate-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	fmt.Fprintln(os.Stderr, "building the local server...")
	gwBin, err := proc.BuildLocal(tmp)
	if err != nil {
		return err
	}

	upAddr, holdAddr, proxyAddr, gwAddr := proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr()
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
	gw, err := startGateway(ctx, tmp, "gateway", gwBin, gwAddr, fmt.Sprintf(gatewayConfig, upAddr, holdAddr))
	if err != nil {
		return err
	}
	defer gw.Stop()
	// A baseline gateway (the code before a change) is measured beside this one in the same
	// run, on the same upstream, so the comparison is not between two states of a shared
	// machine.
	var before *proc.Process
	beforeAddr := proc.FreeAddr()
	if baseline != "" {
		if before, err = startGateway(ctx, tmp, "gateway-baseline", baseline, beforeAddr, fmt.Sprintf(gatewayConfig, upAddr, holdAddr)); err != nil {
			return err
		}
		defer before.Stop()
	}
	for _, a := range []string{upAddr, holdAddr, proxyAddr} {
		if err := proc.WaitListening(ctx, a); err != nil {
			return err
		}
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxIdleConns: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}}
	direct := target{"direct", "http://" + upAddr + "/v1/chat/completions", "bench", 0, chatWire, ""}
	viaProxy := target{"reverse proxy", "http://" + proxyAddr + "/v1/chat/completions", "bench", proxy.Cmd.Process.Pid, chatWire, ""}
	viaGW := target{"fngate", "http://" + gwAddr + "/v1/chat/completions", "bench/openai", gw.Cmd.Process.Pid, chatWire, ""}
	targets := []target{direct, viaProxy, viaGW}

	phase, rounds := 1500*time.Millisecond, 3
	if quick {
		phase, rounds = 300*time.Millisecond, 1
	}
	if !embedOnly {
		// Warm connections and code paths.
		for _, t := range targets {
			closedLoop(client, t, 16, 200*time.Millisecond, false)
			closedLoop(client, t, 4, 100*time.Millisecond, true)
		}

	}

	var tab table
	tab.add("Scenario", "Target", "p50 ms", "p90 ms", "p99 ms", "req/s", "added p50 ms", "added p99 ms", "CPU ms/req")
	summary := map[string]string{}
	measure := func(label string, conc int, stream bool, ts []target, pick func(r *result) []time.Duration) {
		res := make([]result, len(ts))
		for range rounds {
			for i, t := range ts {
				res[i].add(closedLoop(client, t, conc, phase, stream))
			}
		}
		base := pick(&res[0])
		for i, t := range ts {
			d := pick(&res[i])
			added50, added99 := "", ""
			if i > 0 {
				added50 = msf(pct(d, .5) - pct(base, .5))
				added99 = msf(pct(d, .99) - pct(base, .99))
			}
			cpu := ""
			if t.pid != 0 && len(res[i].lat) > 0 {
				cpu = strconv.FormatFloat(float64(res[i].cpu)/1e6/float64(len(res[i].lat)), 'f', 3, 64)
			}
			rps := float64(len(res[i].lat)) / res[i].elapsed.Seconds()
			tab.add(label, t.name, msf(pct(d, .5)), msf(pct(d, .9)), msf(pct(d, .99)), strconv.FormatFloat(rps, 'f', 0, 64), added50, added99, cpu)
			if res[i].errs > 0 {
				tab.notes = append(tab.notes, fmt.Sprintf("%s / %s: %d failed requests", label, t.name, res[i].errs))
			}
			if t.name == "fngate" || t.name == "fngate, limits on (memory)" {
				summary[label] = fmt.Sprintf("+%s/+%s ms", added50, added99)
			}
			if t.name == "fngate, limits off" {
				summary[label+" off"] = fmt.Sprintf("+%s/+%s ms", added50, added99)
			}
		}
	}
	lat := func(r *result) []time.Duration { return r.lat }
	ttft := func(r *result) []time.Duration { return r.ttft }

	if !embedOnly {
		for _, c := range []int{1, 16, 64} {
			fmt.Fprintf(os.Stderr, "non-stream, %d in flight...\n", c)
			measure(fmt.Sprintf("non-stream, %d in flight", c), c, false, targets, lat)
		}
		for _, c := range []int{1, 16} {
			fmt.Fprintf(os.Stderr, "stream, %d in flight...\n", c)
			measure(fmt.Sprintf("stream TTFT, %d in flight", c), c, true, targets, ttft)
			measure(fmt.Sprintf("stream 200 chunks total, %d in flight", c), c, true, targets, lat)
		}

		viaClaude := target{"fngate -> Anthropic route", viaGW.url, "bench/anthropic", gw.Cmd.Process.Pid, chatWire, ""}
		if _, _, err := oneRequest(client, viaClaude.url, "", body(viaClaude.model, true), true, chatWire.done); err == nil {
			fmt.Fprintln(os.Stderr, "Anthropic route...")
			measure("translation: OpenAI route vs Anthropic route, stream, 1 in flight", 1, true, []target{viaGW, viaClaude}, lat)
			measure("translation: OpenAI route vs Anthropic route, non-stream, 16 in flight", 16, false, []target{viaGW, viaClaude}, lat)

			// The Messages door in front of an Anthropic route is pass-through: beside the
			// upstream's own /v1/messages, directly and through the bare proxy.
			msgs := []target{
				{"direct", "http://" + upAddr + "/v1/messages", "bench", 0, messagesWire, ""},
				{"reverse proxy", "http://" + proxyAddr + "/v1/messages", "bench", proxy.Cmd.Process.Pid, messagesWire, ""},
				{"fngate /v1/messages", "http://" + gwAddr + "/v1/messages", "bench/anthropic", gw.Cmd.Process.Pid, messagesWire, ""},
			}
			for _, t := range msgs {
				closedLoop(client, t, 4, 100*time.Millisecond, true)
			}
			for _, c := range []int{1, 16} {
				fmt.Fprintf(os.Stderr, "messages stream, %d in flight...\n", c)
				measure(fmt.Sprintf("messages door, Anthropic route: stream TTFT, %d in flight", c), c, true, msgs, ttft)
				measure(fmt.Sprintf("messages door, Anthropic route: stream 200 chunks total, %d in flight", c), c, true, msgs, lat)
			}
		} else {
			tab.notes = append(tab.notes, "Anthropic route not measured: "+err.Error())
		}
	}

	// Embeddings: a batch of 16 texts, 1,536 dimensions, answered as decimals (about 600 KB).
	// Through the proxy the upstream's bytes pass as they are; the gateway reads every number
	// and writes it again, from decimals (an OpenAI-compatible route) or from the base64 it asks
	// OpenAI for.
	embeds := []target{
		{"direct", "http://" + upAddr + "/v1/embeddings", "bench", 0, embedWire, ""},
		{"reverse proxy", "http://" + proxyAddr + "/v1/embeddings", "bench", proxy.Cmd.Process.Pid, embedWire, ""},
		{"fngate", "http://" + gwAddr + "/v1/embeddings", "bench/embed", gw.Cmd.Process.Pid, embedWire, ""},
		{"fngate, OpenAI route (base64 upstream)", "http://" + gwAddr + "/v1/embeddings", "bench/embed-openai", gw.Cmd.Process.Pid, embedWire, ""},
	}
	if _, _, err := oneRequest(client, embeds[2].url, "", embeds[2].payload(false), false, nil); err == nil {
		for _, t := range embeds {
			closedLoop(client, t, 4, 100*time.Millisecond, false)
		}
		// base64 both ways: what the Python and Node SDKs ask for unless told otherwise.
		embeds64 := []target{
			{"direct", embeds[0].url, "bench", 0, embed64Wire, ""},
			{"reverse proxy", embeds[1].url, "bench", proxy.Cmd.Process.Pid, embed64Wire, ""},
			{"fngate, OpenAI route", embeds[3].url, "bench/embed-openai", gw.Cmd.Process.Pid, embed64Wire, ""},
		}
		if before != nil {
			beforeURL := "http://" + beforeAddr + "/v1/embeddings"
			embeds = append(embeds,
				target{"fngate before", beforeURL, "bench/embed", before.Cmd.Process.Pid, embedWire, ""},
				target{"fngate before, OpenAI route (base64 upstream)", beforeURL, "bench/embed-openai", before.Cmd.Process.Pid, embedWire, ""})
			embeds64 = append(embeds64, target{"fngate before, OpenAI route", beforeURL, "bench/embed-openai", before.Cmd.Process.Pid, embed64Wire, ""})
			for _, t := range embeds[4:] {
				closedLoop(client, t, 4, 100*time.Millisecond, false)
			}
		}
		for _, c := range []int{1, 16} {
			fmt.Fprintf(os.Stderr, "embeddings, batch of 16, %d in flight...\n", c)
			measure(fmt.Sprintf("embeddings, batch of 16 x 1536, float, %d in flight", c), c, false, embeds, lat)
			measure(fmt.Sprintf("embeddings, batch of 16 x 1536, base64, %d in flight", c), c, false, embeds64, lat)
		}
	} else {
		tab.notes = append(tab.notes, "embeddings not measured: "+err.Error())
	}

	var rss, idle float64
	if !embedOnly {
		// Limits: one gateway process with two keys on one priced model, one key without limits
		// and one held to a rate limit and a budget on the memory store, so the difference is the
		// limiter alone (admission, the attempt's charge, the settlement).
		limAddr := proc.FreeAddr()
		lim, err := proc.Start("gateway-limits", filepath.Join(tmp, "gateway-limits.log"), gwBin, "-config", writeConfig(tmp, "limits.yaml", fmt.Sprintf(limitsConfig, upAddr)), "-addr", limAddr, "-route-state", "off")
		if err != nil {
			return err
		}
		defer lim.Stop()
		limCtx, limCancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer limCancel()
		if err := proc.WaitListening(limCtx, limAddr); err != nil {
			return err
		}
		limitsWire := wire{body: func(model string, stream bool) string {
			extra := `,"max_completion_tokens":300`
			if stream {
				extra += `,"stream":true`
			}
			return fmt.Sprintf(chatBody, model, extra)
		}, done: chatWire.done}
		limURL := "http://" + limAddr + "/v1/chat/completions"
		limTargets := []target{direct,
			{"fngate, limits off", limURL, "bench/priced", lim.Cmd.Process.Pid, limitsWire, "bench-key-limits-off"},
			{"fngate, limits on (memory)", limURL, "bench/priced", lim.Cmd.Process.Pid, limitsWire, "bench-key-limits-on"},
		}
		for _, t := range limTargets {
			closedLoop(client, t, 16, 200*time.Millisecond, false)
		}
		for _, c := range []int{1, 16} {
			fmt.Fprintf(os.Stderr, "limits off and on, %d in flight...\n", c)
			measure(fmt.Sprintf("limits off vs on, non-stream, %d in flight", c), c, false, limTargets, lat)
		}
		measure("limits off vs on, stream TTFT, 1 in flight", 1, true, limTargets, ttft)

		fmt.Fprintln(os.Stderr, "1,000 open streams...")
		rss = openStreams(client, "http://"+gwAddr+"/v1/chat/completions", 1000, gw.Cmd.Process.Pid)
		idle = rssMB(gw.Cmd.Process.Pid)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %d CPUs, %s/%s, %s. Phases of %v x %d rounds, targets interleaved.\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), phase, rounds)
	for i, r := range tab.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			b.WriteString(strings.Repeat("|---", len(r)) + "|\n")
		}
	}
	if !embedOnly {
		fmt.Fprintf(&b, "\nGateway RSS with 1,000 concurrent open streams: %.1f MB (after they closed: %.1f MB).\n", rss, idle)
	}
	for _, n := range tab.notes {
		b.WriteString("\nNote: " + n + "\n")
	}
	fmt.Print(b.String())
	fmt.Printf("\nSUMMARY added p50/p99: non-stream@1 %s, @16 %s, @64 %s; TTFT@1 %s; embeddings@1 %s; RSS 1000 streams %.0f MB\n",
		summary["non-stream, 1 in flight"], summary["non-stream, 16 in flight"], summary["non-stream, 64 in flight"],
		summary["stream TTFT, 1 in flight"], summary["embeddings, batch of 16 x 1536, float, 1 in flight"], rss)
	fmt.Printf("SUMMARY limits off -> on (memory store), added p50/p99: non-stream@1 %s -> %s, @16 %s -> %s; TTFT@1 %s -> %s\n",
		summary["limits off vs on, non-stream, 1 in flight off"], summary["limits off vs on, non-stream, 1 in flight"],
		summary["limits off vs on, non-stream, 16 in flight off"], summary["limits off vs on, non-stream, 16 in flight"],
		summary["limits off vs on, stream TTFT, 1 in flight off"], summary["limits off vs on, stream TTFT, 1 in flight"])
	if out != "" {
		return os.WriteFile(out, []byte(b.String()), 0o644)
	}
	return nil
}

// startGateway runs the local server on cfg; a binary built before the Anthropic provider
// existed gets the config without that route.
func startGateway(ctx context.Context, tmp, name, bin, addr, cfg string) (*proc.Process, error) {
	for attempt := 0; attempt < 2; attempt++ {
		path := filepath.Join(tmp, name+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		// Logs go to a file, as they go to a pipe on the platforms: their cost is in the figures.
		gw, err := proc.Start(name, filepath.Join(tmp, name+".log"), bin, "-config", path, "-addr", addr)
		if err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- gw.Cmd.Wait() }()
		ready := make(chan error, 1)
		go func() { ready <- proc.WaitListening(ctx, addr) }()
		select {
		case err := <-ready:
			if err != nil {
				gw.Stop()
				return nil, err
			}
			return gw, nil
		case <-exited:
			var kept []string
			for _, l := range strings.Split(cfg, "\n") {
				if !strings.Contains(l, "claude") {
					kept = append(kept, l)
				}
			}
			cfg = strings.Join(kept, "\n")
		}
	}
	return nil, fmt.Errorf("the gateway did not start")
}

// openStreams holds n streams open through the gateway (the upstream pauses between chunks)
// and reads the gateway's RSS once every stream has delivered its first chunk.
func openStreams(client *http.Client, url string, n, pid int) float64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ready sync.WaitGroup
	ready.Add(n)
	payload := body("bench/hold", true)
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
