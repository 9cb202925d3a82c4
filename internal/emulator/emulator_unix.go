//go:build unix

package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/loopback"
)

// Moto returns the endpoint URL of a moto_server for this test: FNGATE_MOTO_ENDPOINT when
// set, else a server started on a free port and stopped when the test ends. Without
// moto_server the test is skipped (or fails when FNGATE_REQUIRE_EMULATORS=1).
func Moto(t testing.TB) string {
	t.Helper()
	if ep := os.Getenv("FNGATE_MOTO_ENDPOINT"); ep != "" {
		return ep
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		absent(t, "moto_server is not on PATH (pip install 'moto[server]')")
	}
	args := func(port int) []string { return []string{bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port)} }
	if python := motoPython(bin); python != "" {
		args = func(port int) []string {
			return []string{python, "-c", serializedMoto, "127.0.0.1", strconv.Itoa(port)}
		}
	} else {
		t.Log("moto_server's Python was not found: running moto_server as it is, whose conditional writes are not atomic under concurrency")
	}
	port := start(t, server{
		name:     "moto_server",
		args:     args,
		ready:    func(port int) bool { return httpOK(fmt.Sprintf("http://127.0.0.1:%d/moto-api/", port), "") },
		deadline: 30 * time.Second,
	})
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// serializedMoto runs moto's own server app behind one lock. moto_server serves each request
// on its own thread and moto checks a ConditionExpression and then writes, so two concurrent
// conditional writes to one item can both pass: DynamoDB applies each atomically, and the
// tests of code that relies on it (a claim won once, a limit not admitted past) need that.
// Connections stay concurrent (HTTP/1.1 keep-alive); only the handling is serialized.
const serializedMoto = `
import sys, threading
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()
def serialized(environ, start_response):
    with lock:
        return list(app(environ, start_response))
run_simple(sys.argv[1], int(sys.argv[2]), serialized, threaded=True)
`

// motoPython finds the interpreter moto_server runs on (its script's #! line, through a pyenv
// shim when there is one) and checks that it imports moto's server; "" when it does not.
func motoPython(bin string) string {
	script := bin
	if out, err := exec.Command("pyenv", "which", "moto_server").Output(); err == nil {
		script = strings.TrimSpace(string(out))
	}
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	k, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:k]), "\n")
	python, ok := strings.CutPrefix(line, "#!")
	python = strings.TrimSpace(python)
	if !ok || !strings.Contains(filepath.Base(python), "python") || strings.ContainsRune(python, ' ') {
		return ""
	}
	if exec.Command(python, "-c", "import moto.moto_server.werkzeug_app, werkzeug.serving").Run() != nil {
		return ""
	}
	return python
}

// Firestore returns the host:port of a Firestore emulator for this test:
// FIRESTORE_EMULATOR_HOST when set, else `gcloud emulators firestore start` on a free port,
// stopped when the test ends. Without gcloud, its emulator component or Java the test is
// skipped (or fails when FNGATE_REQUIRE_EMULATORS=1).
func Firestore(t testing.TB) string {
	t.Helper()
	if hp := os.Getenv("FIRESTORE_EMULATOR_HOST"); hp != "" {
		return hp
	}
	gcloud, err := exec.LookPath("gcloud")
	if err != nil {
		absent(t, "gcloud is not on PATH (the Firestore emulator ships with the Google Cloud CLI)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		absent(t, "java is not on PATH (the Firestore emulator needs a Java 11+ runtime)")
	}
	if real, err := filepath.EvalSymlinks(gcloud); err == nil {
		component := filepath.Join(filepath.Dir(filepath.Dir(real)), "platform", "cloud-firestore-emulator")
		if _, err := os.Stat(component); err != nil {
			absent(t, "the gcloud Firestore emulator is not installed ("+component+" is missing; gcloud components install cloud-firestore-emulator)")
		}
	}
	port := start(t, server{
		name: "firestore emulator",
		args: func(port int) []string {
			return []string{gcloud, "emulators", "firestore", "start", "--host-port=127.0.0.1:" + strconv.Itoa(port)}
		},
		env:      []string{"CLOUDSDK_CORE_DISABLE_PROMPTS=1"},
		ready:    func(port int) bool { return httpOK(fmt.Sprintf("http://127.0.0.1:%d/", port), "Ok") },
		deadline: 60 * time.Second,
	})
	return fmt.Sprintf("127.0.0.1:%d", port)
}

func absent(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("FNGATE_REQUIRE_EMULATORS") == "1" {
		t.Fatal(why + "; FNGATE_REQUIRE_EMULATORS=1 makes this a failure")
	}
	t.Skip("skipping: " + why)
}

type server struct {
	name     string
	args     func(port int) []string
	env      []string
	ready    func(port int) bool
	deadline time.Duration
}

// start runs the server in its own process group (gcloud forks a JVM; moto a Python
// interpreter) so cleanup stops the whole tree, on a port reserved until the test ends (see
// internal/loopback). A server that exits before it is ready is retried on another port.
func start(t testing.TB, s server) int {
	t.Helper()
	var lastErr error
	for range 3 {
		reserved, err := loopback.Reserve()
		if err != nil {
			t.Fatal(err)
		}
		port := reserved.Number()
		out := &tailBuffer{max: 8 << 10}
		argv := s.args(port)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), s.env...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", s.name, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() { stopGroup(cmd.Process.Pid, exited); reserved.Release() }

		err = waitReady(port, s, exited)
		if err == nil {
			t.Cleanup(stop)
			return port
		}
		stop()
		lastErr = fmt.Errorf("%s on port %d: %w; output:\n%s", s.name, port, err, out.String())
		if errors.Is(err, errTimeout) {
			break
		}
	}
	t.Fatal(lastErr)
	return 0
}

var errTimeout = errors.New("not ready before the deadline")

func waitReady(port int, s server, exited <-chan struct{}) error {
	deadline := time.Now().Add(s.deadline)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("exited before it was ready")
		default:
		}
		if s.ready(port) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errTimeout
}

func stopGroup(pid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
	// The leader may be gone while its children (the JVM) still run.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-exited
}

var probe = &http.Client{Timeout: time.Second}

func httpOK(url, body string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := probe.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), body)
}

// tailBuffer keeps the last max bytes of a process's output, for failure messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
