package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/fakeruntime"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// These tests build the real bootstrap (for the host, with the Lambda build tags) and drive
// it as a subprocess through a fake Runtime API, so they see what Lambda would see: the
// prelude, each chunk as the process sends it, and whether the process survives.

var (
	buildMu  sync.Mutex
	builtBin = map[string]string{} // by build tags
	buildDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// bootstrap returns the path of the built binary, named bootstrap like in the zip.
func bootstrap(t *testing.T) string { return bootstrapWith(t, "lambda.norpc") }

// bootstrapWith builds the bootstrap with tags, once per set of tags.
func bootstrapWith(t *testing.T, tags string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := builtBin[tags]; ok {
		return bin
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "fngate-lambda-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
	}
	dir := filepath.Join(buildDir, strings.NewReplacer(",", "_", ".", "_").Replace(tags))
	bin := filepath.Join(dir, "bootstrap")
	// The deployment's tags, but neither -trimpath nor CGO_ENABLED=0: either would make this
	// build recompile every dependency instead of reusing what go vet and the other tests
	// compiled (about a minute on a cold CI machine), and neither changes behaviour.
	cmd := exec.Command("go", "build", "-tags", tags+",grpcnotrace", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", tags, err, out)
	}
	builtBin[tags] = bin
	return bin
}

// testConfig serves mock behaviours and an OpenAI-compatible upstream at ${UPSTREAM_URL}.
const testConfig = `
auth: none
connections:
  mock: {kind: mock}
  slowmock: {kind: mock, delay_ms: 100}
  upstream: {kind: openai-compatible, base_url: "${UPSTREAM_URL:-http://127.0.0.1:1}/v1"}
  echoing: {kind: openai-compatible, api_key: sk-lambda-key-0123456789, base_url: "${UPSTREAM_URL:-http://127.0.0.1:1}/v1?api-key=lambda-query-key-0123"}
models:
  mock/echo: {routes: [{connection: mock, model: echo}]}
  mock/panic: {routes: [{connection: mock, model: panic}]}
  mock/panic-mid: {routes: [{connection: mock, model: "panic:3"}]}
  mock/cut: {routes: [{connection: mock, model: "cut:3"}]}
  mock/slow: {routes: [{connection: slowmock, model: lorem}]}
  up/paced: {routes: [{connection: upstream, model: paced}]}
  up/endless: {routes: [{connection: upstream, model: endless}]}
  up/silent: {routes: [{connection: upstream, model: silent}]}
  up/echo-key: {routes: [{connection: echoing, model: echo-key}]}
  up/echo-key-mid: {routes: [{connection: echoing, model: echo-key-mid}]}
`

// instance is one running bootstrap and its Runtime API.
type instance struct {
	rt     *fakeruntime.Server
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

func start(t *testing.T, env ...string) *instance {
	t.Helper()
	return startBin(t, bootstrap(t), env...)
}

func startBin(t *testing.T, bin string, env ...string) *instance {
	t.Helper()
	rt := fakeruntime.New()
	in := &instance{rt: rt, cmd: rt.Command(bin, env...), out: &syncBuffer{}, exited: make(chan struct{})}
	in.cmd.Stdout, in.cmd.Stderr = in.out, in.out
	if err := in.cmd.Start(); err != nil {
		rt.Close()
		t.Fatal(err)
	}
	go func() { _ = in.cmd.Wait(); close(in.exited) }()
	// One cleanup, in this order: the process first, then the server (whose Close releases
	// the long poll), never the reverse.
	t.Cleanup(func() {
		_ = in.cmd.Process.Kill()
		<-in.exited
		rt.Close()
		if t.Failed() {
			t.Logf("bootstrap output:\n%s", in.out.String())
		}
	})
	return in
}

func (in *instance) alive() bool {
	select {
	case <-in.exited:
		return false
	default:
		return true
	}
}

// invoke sends a function URL event and waits for the answer.
func (in *instance) invoke(t *testing.T, req fakeruntime.Request) (*fakeruntime.Invocation, *fakeruntime.Prelude, string) {
	t.Helper()
	inv := in.rt.Invoke(req)
	res, err := inv.Wait(20 * time.Second)
	if err != nil {
		t.Fatalf("%v\nbootstrap output:\n%s", err, in.out.String())
	}
	if res.Kind != "response" {
		t.Fatalf("invocation ended with %s: %s", res.Kind, res.Body)
	}
	if res.ContentType != "application/vnd.awslambda.http-integration-response" {
		t.Errorf("response Content-Type = %q", res.ContentType)
	}
	p, payload, err := fakeruntime.SplitPrelude(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return inv, p, string(payload)
}

func chat(model string, stream bool) []byte {
	body := fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"one two three"}]}`, model, stream)
	return fakeruntime.URLEvent("POST", "/v1/chat/completions", map[string]string{"content-type": "application/json"}, body)
}

// sseData returns the data fields of the SSE events in payload.
func sseData(payload string) []string {
	var out []string
	for _, ev := range strings.Split(payload, "\n\n") {
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// content joins the delta texts of a chat stream.
func content(t *testing.T, events []string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range events {
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if d == "[DONE]" || strings.HasPrefix(d, `{"error"`) {
			continue
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("bad chunk %q: %v", d, err)
		}
		for _, ch := range c.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
	return b.String()
}

func lastErrorCode(t *testing.T, events []string) (code string) {
	t.Helper()
	if len(events) == 0 {
		return ""
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	last := events[len(events)-1]
	if !strings.HasPrefix(last, `{"error"`) || json.Unmarshal([]byte(last), &e) != nil {
		return ""
	}
	return e.Error.Code
}

func hasDone(events []string) bool {
	for _, e := range events {
		if e == "[DONE]" {
			return true
		}
	}
	return false
}

// upstream is a fake OpenAI-compatible server whose models pace their output, so a test can
// see when the gateway's answer arrives relative to the upstream's, and when the upstream
// call is cancelled.
type upstream struct {
	*httptest.Server
	mu       sync.Mutex
	finished time.Time     // when the paced model sent its last byte
	auth     []string      // the Authorization header of each request
	gone     chan struct{} // closed when an endless or silent request's context ends
	goneOnce sync.Once
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{gone: make(chan struct{})}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	u.mu.Lock()
	u.auth = append(u.auth, r.Header.Get("Authorization"))
	u.mu.Unlock()
	ctx := r.Context()
	// An upstream that quotes the credentials it was sent back in its error messages.
	quoted, _ := json.Marshal("Incorrect API key provided: " + r.Header.Get("Authorization") + " (query " + r.URL.RawQuery + ")")
	if req.Model == "echo-key" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error","code":"invalid_api_key"}}`, quoted)
		return
	}
	if req.Model == "silent" {
		<-ctx.Done()
		u.goneOnce.Do(func() { close(u.gone) })
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		_ = rc.Flush()
	}
	chunk := func(text string) string {
		return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, req.Model, text)
	}
	send(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
	switch req.Model {
	case "paced":
		for i, w := range []string{"alpha", " beta", " gamma", " delta"} {
			if i > 0 {
				time.Sleep(300 * time.Millisecond)
			}
			send(chunk(w))
		}
		send(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"paced","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		send("[DONE]")
		u.mu.Lock()
		u.finished = time.Now()
		u.mu.Unlock()
	case "echo-key-mid":
		send(chunk("alpha"))
		send(fmt.Sprintf(`{"error":{"code":400,"message":%s}}`, quoted))
	case "endless":
		for i := 0; ; i++ {
			send(chunk(fmt.Sprintf(" w%d", i)))
			select {
			case <-ctx.Done():
				u.goneOnce.Do(func() { close(u.gone) })
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func TestStreamsIncrementallyWithPrelude(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig, "UPSTREAM_URL="+up.URL)
	inv, p, payload := in.invoke(t, fakeruntime.Request{Event: chat("up/paced", true)})

	if p.StatusCode != 200 {
		t.Fatalf("prelude status = %d, want 200; payload %s", p.StatusCode, payload)
	}
	if ct := p.Headers["Content-Type"]; ct != "text/event-stream" {
		t.Errorf("prelude Content-Type = %q, want text/event-stream", ct)
	}
	if p.Headers["Cache-Control"] != "no-cache" || p.Headers["X-Request-Id"] == "" {
		t.Errorf("prelude headers = %v, want Cache-Control no-cache and an X-Request-Id", p.Headers)
	}
	events := sseData(payload)
	if got := content(t, events); got != "alpha beta gamma delta" {
		t.Errorf("streamed content = %q", got)
	}
	if !hasDone(events) {
		t.Errorf("a complete stream must end with [DONE]: %q", payload)
	}

	// The first content chunk must reach the Runtime API while the upstream is still
	// producing: the upstream needs 900 ms after its first word.
	var firstContent time.Time
	for i := 0; ; i++ {
		c, err := inv.Chunk(i, time.Second)
		if err != nil {
			t.Fatalf("no chunk carrying the first word: %v", err)
		}
		if bytes.Contains(c.Data, []byte("alpha")) {
			firstContent = c.At
			break
		}
	}
	// The fake notes its end after its last write, which the answer may overtake.
	var finished time.Time
	gatewaytest.WaitFor(t, func() bool {
		up.mu.Lock()
		defer up.mu.Unlock()
		finished = up.finished
		return !finished.IsZero()
	}, "the paced upstream never finished")
	if lead := finished.Sub(firstContent); lead < 600*time.Millisecond {
		t.Errorf("the first word arrived only %v before the upstream finished; the answer was buffered", lead)
	}
}

// TestUpstreamEchoOfTheKeyIsRedacted: an upstream error that quotes the provider key and the
// base_url's credential reaches the Lambda client redacted, before output and mid-stream,
// and the function's logs do not show them either.
func TestUpstreamEchoOfTheKeyIsRedacted(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig, "UPSTREAM_URL="+up.URL)
	for _, tc := range []struct {
		model  string
		stream bool
		status int
	}{
		{"up/echo-key", false, 400},
		{"up/echo-key", true, 400},
		{"up/echo-key-mid", true, 200},
	} {
		_, p, payload := in.invoke(t, fakeruntime.Request{Event: chat(tc.model, tc.stream)})
		if p.StatusCode != tc.status || !strings.Contains(payload, "Incorrect API key provided: Bearer [REDACTED] (query api-key=[REDACTED])") {
			t.Errorf("%s stream=%v: status %d payload %s; want %d and the upstream's message, redacted", tc.model, tc.stream, p.StatusCode, payload, tc.status)
		}
	}
	for _, secret := range []string{"sk-lambda-key-0123456789", "lambda-query-key-0123"} {
		if strings.Contains(in.out.String(), secret) {
			t.Errorf("the function's logs show %s", secret)
		}
	}
}

func TestPanicsLeaveTheProcessServing(t *testing.T) {
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig)

	_, p, payload := in.invoke(t, fakeruntime.Request{Event: chat("mock/panic", true)})
	if p.StatusCode != 500 || !strings.Contains(payload, `"code":"internal_error"`) {
		t.Errorf("panic before output: status %d body %s; want a 500 internal_error", p.StatusCode, payload)
	}

	_, p, payload = in.invoke(t, fakeruntime.Request{Event: chat("mock/panic-mid", true)})
	events := sseData(payload)
	if p.StatusCode != 200 || content(t, events) != "Lorem ipsum dolor" {
		t.Errorf("panic after output: status %d payload %q", p.StatusCode, payload)
	}
	if hasDone(events) || lastErrorCode(t, events) != "internal_error" {
		t.Errorf("a stream that panicked must end with an error event and no [DONE]: %q", payload)
	}

	_, p, payload = in.invoke(t, fakeruntime.Request{Event: chat("mock/panic", false)})
	if p.StatusCode != 500 {
		t.Errorf("non-streaming panic: status %d body %s", p.StatusCode, payload)
	}

	_, p, payload = in.invoke(t, fakeruntime.Request{Event: chat("mock/echo", true)})
	if p.StatusCode != 200 || content(t, sseData(payload)) != "one two three" {
		t.Errorf("the invoke after the panics: status %d payload %q", p.StatusCode, payload)
	}
	if !in.alive() {
		t.Fatal("the bootstrap exited")
	}
}

func TestMidStreamFailureEndsWithoutDone(t *testing.T) {
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig)
	_, p, payload := in.invoke(t, fakeruntime.Request{Event: chat("mock/cut", true)})
	events := sseData(payload)
	if p.StatusCode != 200 || content(t, events) != "Lorem ipsum dolor" {
		t.Fatalf("status %d payload %q", p.StatusCode, payload)
	}
	if hasDone(events) {
		t.Errorf("a broken upstream stream must not end with [DONE]: %q", payload)
	}
	if lastErrorCode(t, events) == "" {
		t.Errorf("a broken upstream stream must end with an error event: %q", payload)
	}
}

func TestInvokeDeadlineCancelsUpstreamAndEndsInBand(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig, "UPSTREAM_URL="+up.URL)

	inv, p, payload := in.invoke(t, fakeruntime.Request{Event: chat("up/endless", true), Timeout: 2 * time.Second})
	events := sseData(payload)
	if p.StatusCode != 200 || !strings.Contains(content(t, events), "w0") {
		t.Fatalf("status %d payload %q", p.StatusCode, payload)
	}
	if hasDone(events) || lastErrorCode(t, events) != "function_timeout" {
		t.Errorf("a stream cut by the time limit must end with a function_timeout error event and no [DONE]: ...%q", tail(payload))
	}
	res, _ := inv.Wait(time.Second)
	if end := res.Chunks[len(res.Chunks)-1].At; !end.Before(inv.Deadline) {
		t.Errorf("the answer ended %v after the invoke deadline", end.Sub(inv.Deadline))
	}
	select {
	case <-up.gone:
	case <-time.After(time.Until(inv.Deadline)):
		t.Error("the upstream call was still open at the invoke deadline")
	}

	// Before any output: a 504 instead of Lambda's empty 200.
	_, p, payload = in.invoke(t, fakeruntime.Request{Event: chat("up/silent", true), Timeout: 1500 * time.Millisecond})
	if p.StatusCode != http.StatusGatewayTimeout || !strings.Contains(payload, `"code":"function_timeout"`) {
		t.Errorf("time limit before output: status %d body %s", p.StatusCode, payload)
	}

	_, p, _ = in.invoke(t, fakeruntime.Request{Event: chat("mock/echo", false)})
	if p.StatusCode != 200 || !in.alive() {
		t.Errorf("the instance did not survive the time limits (status %d, alive %v)", p.StatusCode, in.alive())
	}
}

func TestBrokenResponseStreamCancelsUpstream(t *testing.T) {
	up := newUpstream(t)
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig, "UPSTREAM_URL="+up.URL)
	inv := in.rt.Invoke(fakeruntime.Request{Event: chat("up/endless", true), HangUpAfter: 400})
	res, err := inv.Wait(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != fakeruntime.ErrHungUp {
		t.Fatalf("the stream ended with %v before the hang-up", res.Err)
	}
	select {
	case <-up.gone:
	case <-time.After(3 * time.Second):
		t.Error("the upstream call outlived the response stream by 3s")
	}
}

func TestRefusesToStartOpen(t *testing.T) {
	open := "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	keyed := "keys: [{name: app, value: k1}]\n" + open
	for _, tc := range []struct {
		name, config, urlAuth, want string
	}{
		{"public without keys", open, "NONE", "has no client keys"},
		{"public, auth type unset", open, "", "has no client keys"},
		{"IAM with keys", keyed, "AWS_IAM", "SigV4"},
		{"unknown auth type", open, "PUBLIC", "want NONE or AWS_IAM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := start(t, "FNGATE_CONFIG_YAML="+tc.config, "FNGATE_URL_AUTH_TYPE="+tc.urlAuth)
			select {
			case <-in.exited:
			case <-time.After(10 * time.Second):
				t.Fatal("the bootstrap started instead of refusing")
			}
			if in.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(in.out.String(), tc.want) {
				t.Errorf("exit %d, output %q; want a failure mentioning %q", in.cmd.ProcessState.ExitCode(), in.out.String(), tc.want)
			}
		})
	}

	t.Run("IAM without keys serves", func(t *testing.T) {
		in := start(t, "FNGATE_CONFIG_YAML="+open, "FNGATE_URL_AUTH_TYPE=AWS_IAM")
		if _, p, body := in.invoke(t, fakeruntime.Request{Event: chat("m", false)}); p.StatusCode != 200 {
			t.Errorf("status %d: %s", p.StatusCode, body)
		}
	})
	t.Run("public with keys checks them", func(t *testing.T) {
		in := start(t, "FNGATE_CONFIG_YAML="+keyed, "FNGATE_URL_AUTH_TYPE=NONE")
		if _, p, _ := in.invoke(t, fakeruntime.Request{Event: chat("m", false)}); p.StatusCode != 401 {
			t.Errorf("without a key: status %d, want 401", p.StatusCode)
		}
		ev := fakeruntime.URLEvent("POST", "/v1/chat/completions", map[string]string{"authorization": "Bearer k1"},
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		if _, p, body := in.invoke(t, fakeruntime.Request{Event: ev}); p.StatusCode != 200 {
			t.Errorf("with the key: status %d: %s", p.StatusCode, body)
		}
	})
}

func tail(s string) string {
	if len(s) > 300 {
		return s[len(s)-300:]
	}
	return s
}

// syncBuffer collects a subprocess's output while tests read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)
