// Command soak runs a bounded mixed load with injected faults against the local server on
// loopback and fails on any unexpected outcome, and on goroutine or memory growth at the end.
//
//	go run ./scripts/soak [-duration 2m] [-concurrency 16] [-stallers 4]
//
// Every scenario has exactly one right outcome, so any other is a bug: a failover that did not
// happen, a broken stream that ended with [DONE], a leak.
//
// One thing is not the gateway's to decide: how fast this machine is. The upstream, the gateway
// and the load share its cores (CI runs on two, shared), so a healthy upstream can miss a
// deadline. The timeouts are chosen far above any healthy answer (firstByte, against answers
// of a few milliseconds), and a timeout the gateway reports honestly (504 upstream_timeout, or
// an upstream_timeout error event, after the client waited at least the configured timeout) is
// the right behaviour for a slow upstream: it is counted and shown, and fails the run only when
// there are so many (over 1% of requests) that the soak no longer measures anything.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/internal/openaifake"
	"github.com/fngate/fngate/scripts/internal/proc"
)

func main() {
	duration := flag.Duration("duration", 2*time.Minute, "how long to run the load")
	concurrency := flag.Int("concurrency", 16, "requests in flight")
	stallers := flag.Int("stallers", 4, "additional clients that only send requests whose first route stalls")
	flag.Parse()
	if err := run(*duration, *concurrency, *stallers); err != nil {
		fmt.Fprintln(os.Stderr, "soak: FAIL:", err)
		os.Exit(1)
	}
}

// The upstream plays one behaviour per upstream model name.
func script(r openaifake.Request) openaifake.Reply {
	model, _ := r.Body["model"].(string)
	ok := openaifake.Reply{Text: "the quick brown fox jumps over the lazy dog", PromptTokens: 12, CompletionTokens: 9}
	switch model {
	case "flaky":
		switch rand.IntN(4) {
		case 0:
			return openaifake.Reply{Status: 503}
		case 1:
			return openaifake.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}}
		case 2:
			return openaifake.Reply{ResetBeforeHeaders: true}
		default:
			return openaifake.Reply{Status: 529}
		}
	case "stalling":
		// Past first_byte, so the gateway fails over; the upstream gives up on its own soon
		// after, so a stalled connection the gateway left does not linger.
		return openaifake.Reply{StallBeforeHeaders: 2 * firstByte}
	case "cutter":
		ok.CutAfter = 3
	case "malformed":
		ok.MalformedAfter = 2
	case "slow":
		ok.ChunkDelay = 5 * time.Millisecond
	}
	return ok
}

// The gateway's timeouts. A healthy answer here takes milliseconds; even a starved two-core
// machine stays far below these, so a timeout means an injected stall (or an honest one, see
// the package doc).
const (
	firstByte    = 5 * time.Second
	idle         = 5 * time.Second
	totalTimeout = 30 * time.Second
	// patience is how long a client waits: past the gateway's total, so the gateway's own
	// timeouts are what the client sees.
	patience = totalTimeout + 10*time.Second
)

var gatewayConfig = `
auth: none
timeouts: {first_byte: ` + firstByte.String() + `, idle: ` + idle.String() + `, total: ` + totalTimeout.String() + `}
connections:
  up: {kind: openai-compatible, base_url: "%s"}
  mock: {kind: mock}
models:
  soak/ok: {routes: [{connection: up, model: steady}]}
  soak/slow: {routes: [{connection: up, model: slow}]}
  soak/failover:
    routing: {max_attempts: 2}
    routes: [{connection: up, model: flaky}, {connection: up, model: steady}]
  soak/stall:
    routing: {max_attempts: 2}
    routes: [{connection: up, model: stalling}, {connection: up, model: steady}]
  soak/cut: {routes: [{connection: up, model: cutter}]}
  soak/malformed: {routes: [{connection: up, model: malformed}]}
  soak/mock: {routes: [{connection: mock, model: tools}]}
`

type scenario struct {
	name   string
	body   string
	stream bool
	// want is the one acceptable outcome: "ok" (200 and, for streams, [DONE]), "broken" (200,
	// content, then an error event and no [DONE]), or an HTTP status such as "400".
	want       string
	disconnect bool // the client leaves after the first chunk
}

func chat(model string, stream bool, extra string) string {
	return fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"hello there"}]%s}`, model, stream, extra)
}

// stalls are the scenarios whose first route stalls past first_byte. They run on their own
// clients (-stallers): each costs first_byte of waiting, which would otherwise starve the
// mixed load.
var stalls = []scenario{
	{"stall, failover", chat("soak/stall", false, ""), false, "ok", false},
	{"stall, failover stream", chat("soak/stall", true, ""), true, "ok", false},
}

var scenarios = []scenario{
	{"ok", chat("soak/ok", false, ""), false, "ok", false},
	{"ok stream", chat("soak/ok", true, `,"stream_options":{"include_usage":true}`), true, "ok", false},
	{"slow stream", chat("soak/slow", true, ""), true, "ok", false},
	{"failover", chat("soak/failover", false, ""), false, "ok", false},
	{"failover stream", chat("soak/failover", true, ""), true, "ok", false},
	{"cut after output", chat("soak/cut", true, ""), true, "broken", false},
	{"malformed after output", chat("soak/malformed", true, ""), true, "broken", false},
	{"mock tools", chat("soak/mock", true, `,"tools":[{"type":"function","function":{"name":"f"}}]`), true, "ok", false},
	{"client leaves", chat("soak/slow", true, ""), true, "", true},
	{"refused field", chat("soak/ok", false, `,"top_p":0.5`), false, "400", false},
	{"unknown model", chat("soak/none", false, ""), false, "404", false},
	{"malformed body", `{"model":`, false, "400", false},
}

func run(duration time.Duration, concurrency, stallers int) error {
	up := openaifake.New()
	up.Script = script
	defer up.Close()

	tmp, err := os.MkdirTemp("", "fngate-soak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := proc.BuildLocal(tmp)
	if err != nil {
		return err
	}
	cfg := filepath.Join(tmp, "soak.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(gatewayConfig, up.BaseURL())), 0o600); err != nil {
		return err
	}
	addr, debug := proc.FreeAddr(), proc.FreeAddr()
	gw, err := proc.Start("gateway", filepath.Join(tmp, "gateway.log"), bin, "-config", cfg, "-addr", addr, "-debug-addr", debug)
	if err != nil {
		return err
	}
	defer gw.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := proc.WaitListening(ctx, addr); err != nil {
		return fmt.Errorf("the gateway did not start on %s", addr)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	base := "http://" + addr
	fmt.Printf("soak: %d in flight (and %d stalling) for %v against %s\n", concurrency, stallers, duration, base)

	load(client, base, concurrency, stallers, 5*time.Second) // warm-up, then the baseline
	before, err := figures(debug)
	if err != nil {
		return err
	}
	res := load(client, base, concurrency, stallers, duration)
	counts, bad := res.counts, res.bad
	client.CloseIdleConnections()
	time.Sleep(3 * time.Second) // let idle connections and timers wind down
	after, err := figures(debug)
	if err != nil {
		return err
	}

	var names []string
	total := 0
	for k, n := range counts {
		names = append(names, k)
		total += n
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Printf("  %-24s %d\n", k, counts[k])
	}
	fmt.Printf("soak: %d requests (%.0f/s); goroutines %d -> %d; heap in use %.1f -> %.1f MB\n",
		total, float64(total)/duration.Seconds(), before["goroutines"], after["goroutines"],
		float64(before["heap_inuse"])/1e6, float64(after["heap_inuse"])/1e6)

	var problems []string
	if len(bad) > 0 {
		problems = append(problems, fmt.Sprintf("%d unexpected outcomes, e.g. %s", len(bad), strings.Join(bad[:min(5, len(bad))], "; ")))
	}
	if len(res.slow) > 0 {
		fmt.Printf("soak: %d honest timeouts of healthy routes (the machine was slower than the timeouts), e.g. %s\n",
			len(res.slow), strings.Join(res.slow[:min(5, len(res.slow))], "; "))
	}
	if len(res.slow)*100 > total {
		problems = append(problems, fmt.Sprintf("%d of %d requests timed out: the gateway, or this machine, is too slow for the soak to measure anything", len(res.slow), total))
	}
	if after["goroutines"] > before["goroutines"]+10 {
		problems = append(problems, fmt.Sprintf("goroutines grew from %d to %d", before["goroutines"], after["goroutines"]))
	}
	if after["heap_inuse"] > 2*before["heap_inuse"]+16<<20 {
		problems = append(problems, fmt.Sprintf("heap in use grew from %d to %d bytes", before["heap_inuse"], after["heap_inuse"]))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Println("soak: PASS")
	return nil
}

type result struct {
	counts map[string]int
	bad    []string // outcomes other than the scenario's one right outcome
	slow   []string // honest timeouts where the right outcome needed a healthy route in time
}

// load runs the scenarios at random on concurrency clients, and the stall scenarios on
// stallers more, for d.
func load(client *http.Client, base string, concurrency, stallers int, d time.Duration) result {
	var mu sync.Mutex
	res := result{counts: map[string]int{}}
	var stop atomic.Bool
	time.AfterFunc(d, func() { stop.Store(true) })
	var wg sync.WaitGroup
	worker := func(from []scenario) {
		defer wg.Done()
		for !stop.Load() {
			sc := from[rand.IntN(len(from))]
			got, waited := do(client, base, sc)
			mu.Lock()
			res.counts[sc.name+": "+got]++
			switch judge(sc, got, waited) {
			case honestTimeout:
				res.slow = append(res.slow, fmt.Sprintf("%s after %v", sc.name, waited.Round(time.Millisecond)))
			case unexpected:
				res.bad = append(res.bad, fmt.Sprintf("%s: got %s after %v, want %s", sc.name, got, waited.Round(time.Millisecond), sc.want))
			}
			mu.Unlock()
		}
	}
	for range concurrency {
		wg.Add(1)
		go worker(scenarios)
	}
	for range stallers {
		wg.Add(1)
		go worker(stalls)
	}
	wg.Wait()
	return res
}

type verdict int

const (
	right verdict = iota
	honestTimeout
	unexpected
)

// judge compares an outcome with the scenario's one right outcome. A scenario that reaches a
// healthy upstream may instead time out honestly: the gateway said upstream_timeout, and not
// before its timeout had passed.
func judge(sc scenario, got string, waited time.Duration) verdict {
	switch {
	case sc.want == "" || got == sc.want:
		return right
	case got == outcomeTimeout && (sc.want == "ok" || sc.want == "broken") && waited >= min(firstByte, idle):
		return honestTimeout
	}
	return unexpected
}

// outcomeTimeout is what do reports for the gateway's upstream_timeout, before output (a 504)
// or after it (an error event, no [DONE]).
const outcomeTimeout = "timeout"

// do sends one scenario's request and returns its outcome and how long the client waited.
func do(client *http.Client, base string, sc scenario) (string, time.Duration) {
	start := time.Now()
	got := send(client, base, sc)
	return got, time.Since(start)
}

func send(client *http.Client, base string, sc scenario) string {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(sc.body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "transport error: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode == http.StatusGatewayTimeout && bytes.Contains(body, []byte(`"code":"upstream_timeout"`)) {
			return outcomeTimeout
		}
		return fmt.Sprint(resp.StatusCode)
	}
	if !sc.stream {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m["choices"] == nil {
			return "bad JSON body"
		}
		return "ok"
	}
	br := bufio.NewReader(resp.Body)
	content, done, errEvent, timedOut := false, false, false, false
	for {
		line, err := br.ReadBytes('\n')
		switch {
		case bytes.HasPrefix(line, []byte("data: [DONE]")):
			done = true
		case bytes.HasPrefix(line, []byte(`data: {"error"`)):
			errEvent = true
			timedOut = bytes.Contains(line, []byte(`"code":"upstream_timeout"`))
		case bytes.Contains(line, []byte(`"content":"`)) || bytes.Contains(line, []byte(`"tool_calls"`)):
			content = true
			if sc.disconnect {
				return "left"
			}
		}
		if err != nil {
			break
		}
	}
	switch {
	case done && !errEvent && content:
		return "ok"
	case errEvent && !done && timedOut:
		return outcomeTimeout
	case errEvent && !done && content:
		return "broken"
	}
	return fmt.Sprintf("stream content=%v error=%v done=%v", content, errEvent, done)
}

func figures(debugAddr string) (map[string]uint64, error) {
	resp, err := http.Get("http://" + debugAddr + "/debug/fngate")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[string]uint64
	return m, json.NewDecoder(resp.Body).Decode(&m)
}
