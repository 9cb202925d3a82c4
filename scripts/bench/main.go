// Command bench measures what the gateway adds, side by side in one run on one machine: a fake
// upstream with zero think time, the gateway's local server, a bare httputil.ReverseProxy (the
// floor: one extra loopback hop and nothing else), and a closed-loop load generator. Targets are
// interleaved in rounds so drift on a shared machine hits all of them alike, and every cell
// shows its spread over the rounds.
//
//	go run ./scripts/bench [-quick] [-only REGEXP] [-baseline REV] [-cpuprofile DIR] [-out FILE]
//	go run ./scripts/bench -sizes [-quick] [-only REGEXP] [-cold-starts N] [-out FILE] [-json FILE]
//
// -baseline builds the gateway at a git revision as well and runs it beside this checkout's
// (before and after a change, in one run); -cpuprofile records the gateway's CPU profile under
// each scenario's load (go tool pprof DIR/<scenario>.pprof). The upstream and the proxy run as
// subprocesses of this binary (-mode upstream|proxy); -mode load puts one scenario's load on
// a gateway started by hand, for profiling it with its -debug-addr.
//
// -sizes measures the gateway under the CPU share of each Lambda memory size and Cloud
// Functions vCPU setting, by a kernel CPU quota around the gateway process (sizes.go says how
// faithful that is); -json writes the figures `fngate cost -measured` reads. It needs a
// writable cgroup cpu controller (root in this VM) and refuses to run without one.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"time"
)

func main() {
	mode := flag.String("mode", "run", "run | load (one scenario's load on -url) | upstream | proxy | bedrock-guardrails | incgroup (the last four are used internally)")
	sizes := flag.Bool("sizes", false, "measure the gateway under each function size's CPU share instead (a cgroup CPU quota)")
	coldStarts := flag.Int("cold-starts", 15, "sizes: cold starts per size (0: none)")
	jsonOut := flag.String("json", "", "sizes: also write the figures `fngate cost -measured` reads to this file")
	cgroupDir := flag.String("cgroup", "", "incgroup: the group to join before exec")
	stamp := flag.String("stamp", "", "incgroup: write the exec time (Unix ns) to this file")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (upstream, proxy)")
	target := flag.String("target", "", "proxy target URL")
	hold := flag.Duration("hold", 0, "upstream: pause between stream chunks; bedrock-guardrails: the time to answer")
	quick := flag.Bool("quick", false, "one short round (a smoke run, not for publishing)")
	out := flag.String("out", "", "also write the results to this markdown file")
	only := flag.String("only", "", "run only the scenarios whose label matches this regular expression")
	baseline := flag.String("baseline", "", "also run the gateway built at this git revision, beside this checkout's")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the gateway under each scenario's load into this directory")
	rounds := flag.Int("rounds", 4, "rounds per scenario")
	phase := flag.Duration("phase", 750*time.Millisecond, "how long each target is loaded per round")
	streams := flag.Int("streams", 1000, "open streams for the RSS figure (0: skip it)")
	loadURL := flag.String("url", "", "load: the gateway, http://host:port")
	loadModel := flag.String("model", "bench/openai", "load: the model to ask for")
	loadWire := flag.String("wire", "chat", "load: chat | completions | messages | responses")
	conc := flag.Int("conc", 16, "load: requests in flight")
	dur := flag.Duration("duration", 10*time.Second, "load: how long")
	stream := flag.Bool("stream", false, "load: stream")
	flag.Parse()

	var err error
	switch *mode {
	case "upstream":
		err = serveUpstream(*addr, *hold)
	case "proxy":
		err = serveProxy(*addr, *target)
	case "bedrock-guardrails":
		err = serveBedrockGuardrails(*addr, *hold)
	case "incgroup":
		err = execInCgroup(*cgroupDir, *stamp, flag.Args())
	case "run":
		opt := options{out: *out, baseline: *baseline, profile: *profile, rounds: *rounds, phase: *phase, rssStream: *streams}
		if *only != "" {
			if opt.only, err = regexp.Compile(*only); err != nil {
				break
			}
		}
		if *quick {
			opt.rounds, opt.phase = 1, 300*time.Millisecond
		}
		if *sizes {
			err = runSizes(opt, sizeOptions{coldStarts: *coldStarts, sysfs: "/sys/fs/cgroup", json: *jsonOut})
			break
		}
		err = run(opt)
	case "load":
		err = load(*loadURL, *loadModel, *loadWire, *conc, *dur, *stream)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// serveProxy is the floor: the standard library's reverse proxy with streaming flushes. It
// reads the request body whole before forwarding it, as the gateway does. Streaming it
// instead loses about one stream in twenty to this zero-think-time upstream: the upstream
// answers before the transport has finished writing the request, net/http's HTTP/1 server
// closes the inbound body once the proxy starts its response, the transport's last read of
// that body fails, and it tears down the upstream connection mid-answer ("ReverseProxy read
// error during body copy: use of closed network connection"; golang/go#40747).
func serveProxy(addr, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1
	p.Transport = &http.Transport{MaxIdleConnsPerHost: 1024, MaxIdleConns: 2048, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: h}).Serve(ln)
}

// load runs one scenario against a gateway and prints its figures: the load to put on a
// gateway started by hand with -debug-addr while `go tool pprof` records it.
func load(base, model, wireName string, conc int, dur time.Duration, stream bool) error {
	w, ok := wires[wireName]
	if !ok {
		return fmt.Errorf("unknown wire %q", wireName)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048, MaxIdleConns: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}}
	res := closedLoop(client, target{name: "load", base: base, model: model, wire: w}, conc, dur, stream, 0)
	fmt.Printf("%d requests (%d failed) in %v: p50 %s ms, p99 %s ms, TTFT p50 %s ms\n", len(res.lat), res.errs, res.elapsed.Round(time.Millisecond),
		msf(pct(res.lat, .5)), msf(pct(res.lat, .99)), msf(pct(res.ttft, .5)))
	return nil
}
