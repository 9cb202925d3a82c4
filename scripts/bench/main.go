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
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	mode := flag.String("mode", "run", "run | upstream | proxy (the last two are used internally)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (upstream, proxy)")
	target := flag.String("target", "", "proxy target URL")
	hold := flag.Duration("hold", 0, "upstream: pause between stream chunks")
	quick := flag.Bool("quick", false, "shorter phases (a smoke run, not for publishing)")
	out := flag.String("out", "", "also write the results table to this markdown file")
	flag.Parse()

	var err error
	switch *mode {
	case "upstream":
		err = serveUpstream(*addr, *hold)
	case "proxy":
		err = serveProxy(*addr, *target)
	case "run":
		err = run(*quick, *out)
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

// process is a subprocess under measurement.
type process struct {
	name string
	cmd  *exec.Cmd
	url  string
}

func (p *process) stop() {
	if p != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func start(name string, logTo string, args ...string) (*process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if logTo != "" {
		f, err := os.Create(logTo)
		if err != nil {
			return nil, err
		}
		cmd.Stdout = f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &process{name: name, cmd: cmd}, nil
}

func waitReady(ctx context.Context, addr string) error {
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not start listening", addr)
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the fngate module")
	}
	return filepath.Dir(mod), nil
}
