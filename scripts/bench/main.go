// Command bench measures what the gateway adds, side by side in one run on one machine: a fake
// upstream with zero think time, the gateway's local server, a bare httputil.ReverseProxy (the
// floor: one extra loopback hop and nothing else), and a closed-loop load generator. Targets are
// interleaved in rounds so drift on a shared machine hits all of them alike.
//
//	go run ./scripts/bench [-quick] [-out BENCHMARKS.md]
//
// The upstream and the proxy run as subprocesses of this binary (-mode upstream|proxy); the
// gateway is the real local server, built from this checkout.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

func main() {
	mode := flag.String("mode", "run", "run | upstream | proxy (the last two are used internally)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (upstream, proxy)")
	target := flag.String("target", "", "proxy target URL")
	hold := flag.Duration("hold", 0, "upstream: pause between stream chunks")
	quick := flag.Bool("quick", false, "shorter phases (a smoke run, not for publishing)")
	out := flag.String("out", "", "also write the results table to this markdown file")
	only := flag.String("only", "", "run one scenario: embeddings (default: all)")
	baseline := flag.String("baseline", "", "a local server binary (go build ./functions/local) of the code to compare with, measured beside the current one")
	flag.Parse()

	var err error
	switch *mode {
	case "upstream":
		err = serveUpstream(*addr, *hold)
	case "proxy":
		err = serveProxy(*addr, *target)
	case "run":
		err = run(*quick, *out, *only, *baseline)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// serveProxy is the floor: the standard library's reverse proxy with streaming flushes.
func serveProxy(addr, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1
	p.Transport = &http.Transport{MaxIdleConnsPerHost: 1024, MaxIdleConns: 2048, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: p}).Serve(ln)
}
