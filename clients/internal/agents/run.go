package agents

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultTimeout bounds one client run when the options leave Timeout zero. A one-shot answer
// from a loopback server takes a second or two; the slack is for a loaded CI machine. A door
// that answers wrongly often shows up as a client retrying with backoff (Claude Code keeps
// retrying a 401 for minutes; see NoRetries), and the bound turns that hang into a failure
// that shows the output.
const DefaultTimeout = 2 * time.Minute

// Result is what one client run left behind. Nothing in it is asserted by the harness except
// Escapes (see run).
type Result struct {
	Args     []string // the command line after the binary
	Stdout   string
	Stderr   string
	ExitCode int  // -1 when the process was killed
	TimedOut bool // the run hit its timeout and was killed
	// Elapsed is wall time, for reports and logs only: tests must not assert on it.
	Elapsed time.Duration
	// Home is the temporary HOME the client ran with (its config and session files are there).
	Home string
	// Escapes are the request lines the proxy trap saw: traffic the client tried to send
	// somewhere other than loopback. The harness fails the test when it is not empty.
	Escapes []string
}

// command is one client process to start: everything run needs besides the test.
type command struct {
	name    string // "claude" or "codex", for messages
	bin     string
	args    []string
	env     []string // on top of baseEnv; later entries win
	dir     string
	home    string
	timeout time.Duration
	// allowEscapes keeps proxy-trap hits out of the test's failures (Result.Escapes still
	// lists them); only the harness's own test of the guard sets it.
	allowEscapes bool
}

// requireLoopback fails the test unless baseURL names this machine: the harness promises that
// nothing leaves it, and the proxy trap would catch the request anyway, later and less clearly.
func requireLoopback(t testing.TB, client, baseURL string) {
	t.Helper()
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		t.Fatalf("agents.%s: BaseURL %q is not an absolute URL", client, baseURL)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		t.Fatalf("agents.%s: BaseURL %q is not on loopback", client, baseURL)
	}
}

// run starts the client with a minimal environment, waits for it within the timeout, and kills
// its whole process group on timeout (both clients start helpers that would otherwise outlive
// the test and hold its pipes open).
func run(t testing.TB, c command) Result {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(c.home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	trap := newProxyTrap(t)
	env := mergeEnv(append(baseEnv(c.home, trap.url()), c.env...))

	timeout := c.timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// Leave the test binary time to report when its own -timeout is nearer than ours.
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dl.Deadline(); ok {
			if left := time.Until(d) - 10*time.Second; left > 0 && left < timeout {
				timeout = left
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, c.bin, c.args...)
	cmd.Dir = c.dir
	cmd.Env = env
	cmd.Stdin = nil // /dev/null: Codex appends a piped stdin to the prompt, and reads it to EOF
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	res := Result{
		Args:     c.args,
		Stdout:   stdout.String(),
		Stderr:   stderr.String(),
		ExitCode: -1,
		Elapsed:  time.Since(start),
		Home:     c.home,
		TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded),
		Escapes:  trap.close(),
	}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !res.TimedOut {
		t.Fatalf("%s: start %s: %v", c.name, c.bin, err)
	}
	t.Logf("%s %s: exit %d after %s", c.name, strings.Join(redactArgs(c.args), " "), res.ExitCode, res.Elapsed.Round(time.Millisecond))
	if res.TimedOut {
		t.Errorf("%s: killed after %s\nstdout:\n%s\nstderr:\n%s", c.name, timeout, tail(res.Stdout), tail(res.Stderr))
	}
	if !c.allowEscapes {
		for _, e := range res.Escapes {
			t.Errorf("%s tried to leave loopback through the proxy guard: %s", c.name, e)
		}
	}
	return res
}

// baseEnv is the whole environment a client starts from: nothing of the developer's is
// inherited but PATH (the clients run shells and tools), so a real
// ANTHROPIC_API_KEY, OPENAI_API_KEY, proxy or config dir on the machine cannot leak into a
// test, and every config, cache and state dir lives in the test's temporary HOME.
//
// The proxy variables are a second fence behind each client's own switches: any HTTP request
// to a host other than loopback goes to the trap, which records it and closes the connection,
// so it fails fast and the test names it. It does not see traffic that ignores proxy settings
// (DNS lookups, raw sockets); the switches in claude.go and codex.go are what stop those. This
// package's tests, run in a network namespace with only loopback under strace, made no DNS
// lookup and connected to nothing but their stubs (and nscd's local socket). The one change
// the proxy makes to what a client sends: Claude Code skips its HEAD /api/hello preconnect
// behind a proxy, which ClaudeOfflineEnv turns off anyway.
func baseEnv(home, proxyURL string) []string {
	env := []string{
		"HOME=" + home,
		"USER=fngate-test",
		"LOGNAME=fngate-test",
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		// The clients' scratch files stay in the test's directory too. It must not be a parent
		// of CODEX_HOME: Codex refuses to put its PATH helpers (apply_patch and friends) under
		// the temporary dir and warns on every run.
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"NO_PROXY=127.0.0.1,localhost,::1",
		"no_proxy=127.0.0.1,localhost,::1",
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, k+"="+proxyURL)
	}
	return env
}

// mergeEnv keeps the last value of each variable, so options can override the defaults.
func mergeEnv(env []string) []string {
	idx := map[string]int{}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// proxyTrap is a loopback listener posing as the HTTP(S) proxy. A client that honours the proxy
// variables sends it "CONNECT host:443" (or "GET http://host/...") for any host outside
// NO_PROXY; the trap keeps that first line and hangs up.
type proxyTrap struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen []string
}

func newProxyTrap(t testing.TB) *proxyTrap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy trap: %v", err)
	}
	p := &proxyTrap{ln: ln}
	p.wg.Add(1)
	go p.serve()
	return p
}

func (p *proxyTrap) url() string { return "http://" + p.ln.Addr().String() }

func (p *proxyTrap) serve() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			line = strings.TrimSpace(line)
			if line == "" {
				line = "(a connection that sent no request line)"
			}
			p.mu.Lock()
			p.seen = append(p.seen, line)
			p.mu.Unlock()
			_, _ = conn.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		}()
	}
}

// close stops the trap and returns what it saw.
func (p *proxyTrap) close() []string {
	p.ln.Close()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

// redactArgs shortens the prompt (the last argument) for the log line.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	if n := len(out); n > 0 && len(out[n-1]) > 40 {
		out[n-1] = out[n-1][:40] + "…"
	}
	return out
}

// tail keeps the end of a long output for failure messages.
func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}
