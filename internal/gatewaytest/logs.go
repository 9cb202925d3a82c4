package gatewaytest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/record"
)

// LogBuffer collects log lines that handler goroutines may still be writing while the test
// reads them. The zero value is ready to use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Reset forgets the lines written so far.
func (l *LogBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
}

// Logger is a JSON logger writing to l.
func (l *LogBuffer) Logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// Lines returns the decoded lines whose msg is msg, every line when msg is "". A line that is
// not JSON fails the test.
func (l *LogBuffer) Lines(t testing.TB, msg string) []map[string]any {
	t.Helper()
	return withMsg(l.decode(t), msg)
}

// waitLimit bounds how long a test waits for lines the gateway writes after it answered.
const waitLimit = 5 * time.Second

// WaitLines is Lines once at least n lines have msg, or with what there is after a few
// seconds: the gateway logs a request's attempts and summary after the client has its answer.
func (l *LogBuffer) WaitLines(t testing.TB, msg string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		out := l.Lines(t, msg)
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// AfterRequests returns every line once n request summaries were logged (the summary is each
// request's last line; a stream's may follow its [DONE]), and fails the test when they do not
// come within a few seconds.
func (l *LogBuffer) AfterRequests(t testing.TB, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		all := l.decode(t)
		if len(withMsg(all, record.MsgRequest)) >= n {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d request lines, have:\n%s", n, l.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Attempts returns the attempt lines, successful and failed, of the first n requests.
func (l *LogBuffer) Attempts(t testing.TB, n int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range l.AfterRequests(t, n) {
		if line["msg"] == record.MsgAttempt || line["msg"] == record.MsgProviderError {
			out = append(out, line)
		}
	}
	return out
}

// CheckAttempt reports each field of want that the attempt line a does not hold.
func CheckAttempt(t testing.TB, a map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if a[k] != v {
			t.Errorf("attempt log %s = %v, want %v (line %v)", k, a[k], v, a)
		}
	}
}

func (l *LogBuffer) decode(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(l.String(), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func withMsg(lines []map[string]any, msg string) []map[string]any {
	if msg == "" {
		return lines
	}
	var out []map[string]any
	for _, m := range lines {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// WaitFor waits until cond holds, failing the test with msg when it still does not after a
// few seconds: what the gateway does after the client has its answer (cancelling an
// abandoned upstream call, say) lands a moment later.
func WaitFor(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
