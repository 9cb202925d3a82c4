package gcf

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/internal/loopback"
	"github.com/fngate/fngate/internal/otlpfake"
)

// The function is served the way Cloud Functions serves it: by the functions framework,
// which finds it in its registry by FUNCTION_TARGET, on a real port. The config comes from
// the environment, read by the first request.

const testConfig = `
auth: none
connections:
  mock: {kind: mock}
  upstream: {kind: openai-compatible, base_url: "${UPSTREAM_URL}/v1"}
models:
  mock/echo: {routes: [{connection: mock, model: echo}]}
  mock/panic-mid: {routes: [{connection: mock, model: "panic:2"}]}
  up/paced: {routes: [{connection: upstream, model: paced}]}
  up/endless: {routes: [{connection: upstream, model: endless}]}
responses: {compaction_keys: [{id: k1, key: "2Xc0rJ3j4bq6Qy5mH8uA1wE7tZ9pLkN0sV2dF4gB6hY="}]}
`

var (
	baseURL string // the functions framework serving Gateway at /
	up      = &upstream{gone: make(chan struct{}, 16)}
)

func TestMain(m *testing.M) {
	us := httptest.NewServer(http.HandlerFunc(up.serve))
	os.Setenv("UPSTREAM_URL", us.URL)
	os.Setenv("FNGATE_CONFIG_YAML", testConfig)
	os.Setenv("FUNCTION_TARGET", FunctionName)
	reserved, err := loopback.Reserve() // held until the test binary exits
	if err != nil {
		panic(err)
	}
	port := reserved.String()
	go func() {
		if err := funcframework.StartHostPort("127.0.0.1", port); err != nil {
			fmt.Fprintln(os.Stderr, "functions framework:", err)
			os.Exit(1)
		}
	}()
	baseURL = "http://127.0.0.1:" + port
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(baseURL + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "the functions framework did not start")
			os.Exit(1)
		}
	}
	code := m.Run()
	us.Close()
	os.Exit(code)
}

// upstream is a fake OpenAI-compatible server with paced and endless streams.
type upstream struct {
	mu       sync.Mutex
	finished time.Time     // when the paced model sent its last word
	gone     chan struct{} // one value per endless request whose context ended
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	send := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		_ = rc.Flush()
	}
	chunk := func(text string) string {
		return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, text)
	}
	switch req.Model {
	case "paced":
		for i, word := range []string{"alpha", " beta", " gamma", " delta"} {
			if i > 0 {
				time.Sleep(300 * time.Millisecond)
			}
			send(chunk(word))
		}
		// Stamped before the end is sent, so a client that has read [DONE] always sees it.
		u.mu.Lock()
		u.finished = time.Now()
		u.mu.Unlock()
		send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		send("[DONE]")
	case "endless":
		for i := 0; ; i++ {
			send(chunk(fmt.Sprintf(" w%d", i)))
			select {
			case <-r.Context().Done():
				u.gone <- struct{}{}
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func post(t *testing.T, model string, stream bool, text string) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":%q}]}`, model, stream, text)
	resp, err := http.Post(baseURL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// event is one SSE data field and when the client read it.
type event struct {
	data string
	at   time.Time
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, event{d, time.Now()})
		}
	}
	return out
}

func text(events []event) (s string, done bool, errEvent bool) {
	var b strings.Builder
	for _, e := range events {
		switch {
		case e.data == "[DONE]":
			done = true
		case strings.HasPrefix(e.data, `{"error"`):
			errEvent = true
		default:
			var c struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			_ = json.Unmarshal([]byte(e.data), &c)
			for _, ch := range c.Choices {
				b.WriteString(ch.Delta.Content)
			}
		}
	}
	return b.String(), done, errEvent
}

func TestFrameworkServesTheRegisteredFunction(t *testing.T) {
	resp, err := http.Get(baseURL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"mock/echo"`) {
		t.Fatalf("GET /v1/models through the functions framework: %d %s", resp.StatusCode, body)
	}
}

func TestStreamsIncrementally(t *testing.T) {
	resp := post(t, "up/paced", true, "hi")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(t, resp.Body)
	got, done, _ := text(events)
	if got != "alpha beta gamma delta" || !done {
		t.Fatalf("content %q, [DONE] %v", got, done)
	}
	var first time.Time
	for _, e := range events {
		if strings.Contains(e.data, "alpha") {
			first = e.at
			break
		}
	}
	up.mu.Lock()
	finished := up.finished
	up.mu.Unlock()
	if lead := finished.Sub(first); lead < 600*time.Millisecond {
		t.Errorf("the client read the first word only %v before the upstream finished; the answer was buffered", lead)
	}
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	resp := post(t, "up/endless", true, "hi")
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "w0") {
			break
		}
	}
	resp.Body.Close() // mid-body: the transport drops the connection
	select {
	case <-up.gone:
	case <-time.After(3 * time.Second):
		t.Fatal("the upstream call outlived the client by 3s")
	}
}

func TestPanicMidStreamKeepsServing(t *testing.T) {
	resp := post(t, "mock/panic-mid", true, "hi")
	got, done, errEvent := text(readEvents(t, resp.Body))
	resp.Body.Close()
	if got != "Lorem ipsum" || done || !errEvent {
		t.Errorf("content %q, [DONE] %v, error event %v; want two words, an error event, no [DONE]", got, done, errEvent)
	}
	resp = post(t, "mock/echo", false, "still here")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the panic: status %d", resp.StatusCode)
	}
}

// TestConcurrentStreams runs many streams at once through one instance, as gen2 does with
// max_instance_request_concurrency; under -race this also checks that requests share no
// mutable state.
func TestConcurrentStreams(t *testing.T) {
	const n = 200
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf("request number %d", i)
			body := fmt.Sprintf(`{"model":"mock/echo","stream":true,"messages":[{"role":"user","content":%q}]}`, msg)
			resp, err := client.Post(baseURL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				failed.Add(1)
				return
			}
			defer resp.Body.Close()
			if got, done, _ := text(readEvents(t, resp.Body)); got != msg || !done {
				t.Errorf("request %d got %q (done %v)", i, got, done)
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d concurrent streams failed", f, n)
	}
}

func TestLazyBuildsOnceOnFirstUse(t *testing.T) {
	var builds atomic.Int32
	release := make(chan struct{})
	l := newLazy(time.Hour, func(context.Context) (http.Handler, error) {
		builds.Add(1)
		<-release
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }), nil
	})
	if builds.Load() != 0 {
		t.Fatal("built before the first request")
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			l.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != 204 {
				t.Errorf("status %d", rec.Code)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if b := builds.Load(); b != 1 {
		t.Errorf("built %d times for 50 concurrent first requests, want 1", b)
	}
}

func TestLazyRetriesAFailedBuildLater(t *testing.T) {
	var builds atomic.Int32
	fail := true
	l := newLazy(50*time.Millisecond, func(context.Context) (http.Handler, error) {
		builds.Add(1)
		if fail {
			return nil, errors.New("secret manager unavailable")
		}
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }), nil
	})
	serve := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec
	}
	rec := serve()
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"gateway_not_configured"`) {
		t.Fatalf("failed build: %d %s", rec.Code, rec.Body)
	}
	serve()
	if b := builds.Load(); b != 1 {
		t.Errorf("rebuilt %d times within retryAfter", b-1)
	}
	fail = false
	time.Sleep(60 * time.Millisecond)
	if rec := serve(); rec.Code != 204 || builds.Load() != 2 {
		t.Errorf("after retryAfter: status %d, builds %d", rec.Code, builds.Load())
	}
}

func TestBuildRefusesAnOpenPublicFunction(t *testing.T) {
	open := "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	for _, tc := range []struct {
		name, config, invoker, wantErr string
	}{
		{"public without keys", open, "", "has no client keys"},
		{"explicitly public without keys", open, "PUBLIC", "has no client keys"},
		{"IAM without keys", open, "IAM", ""},
		{"public with auth none", "auth: none\n" + open, "PUBLIC", ""},
		{"public with keys", "keys: [{name: a, value: k}]\n" + open, "PUBLIC", ""},
		{"unknown invoker", open, "ANYONE", "want PUBLIC or IAM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"FNGATE_CONFIG_YAML": tc.config, "FNGATE_INVOKER_AUTH": tc.invoker}
			_, err := build(context.Background(), func(k string) string { return env[k] })
			if tc.wantErr == "" && err != nil {
				t.Fatalf("build: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("build error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestBuildExportsTelemetry: a telemetry block makes the function trace its requests, with
// the function described in the resource.
func TestBuildExportsTelemetry(t *testing.T) {
	rcv := otlpfake.New(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // the SDK's batch, read from the process
	env := map[string]string{
		"FNGATE_CONFIG_YAML":  "auth: none\nconnections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\ntelemetry: {otlp: {endpoint: \"" + rcv.URL + "\"}}\n",
		"FNGATE_INVOKER_AUTH": "IAM",
		"K_SERVICE":           "fngate-gateway",
	}
	h, err := build(context.Background(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)))
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	spans := rcv.WaitSpans(t, 2, 10*time.Second)
	srv := otlpfake.Find(spans, "SERVER", "chat m")
	if len(srv) != 1 || srv[0].Resource["faas.name"] != "fngate-gateway" || srv[0].Resource["cloud.platform"] != "gcp_cloud_functions" {
		t.Errorf("spans:%s", otlpfake.Describe(spans))
	}
}

// TestTelemetryAPIGetsTheFunctionsCredentials: an export to Google's Telemetry API (Cloud
// Trace) is sent with the function's credentials; any other endpoint without them.
func TestTelemetryAPIGetsTheFunctionsCredentials(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		env  map[string]string
		want bool
	}{
		{"telemetry: {otlp: {endpoint: https://telemetry.googleapis.com}}", nil, true},
		{"telemetry: {otlp: {endpoint: http://collector.internal:4318}}", nil, false},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://telemetry.googleapis.com"}, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://telemetry.googleapis.com/v1/traces"}, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{"telemetry: {otlp: {endpoint: http://127.0.0.1:4318}}", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://telemetry.googleapis.com"}, false},
	} {
		cfg, err := config.Parse(context.Background(), []byte("connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"+tc.yaml+"\n"), config.Options{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		if got := toGoogle(cfg, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%q %v: toGoogle = %v, want %v", tc.yaml, tc.env, got, tc.want)
		}
	}
}
