package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

func TestInFlightCap(t *testing.T) {
	g := newGateway(t, `
limits: {max_in_flight: 2}
connections:
  slow: {kind: mock, delay_ms: 100}
models:
  slow: {routes: [{connection: slow, model: lorem}]}
`)
	var bodies []io.ReadCloser
	for range 2 {
		resp, err := http.Post(g.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"slow","stream":true,"messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = resp.Body.Read(make([]byte, 1))
		bodies = append(bodies, resp.Body)
	}
	r := g.Chat(t, `{"model":"slow","messages":[{"role":"user","content":"x"}]}`)
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || r.ErrorObject(t)["code"] != "gateway_busy" {
		t.Errorf("third request: %d %v %s", r.Status, r.Header, r.Body)
	}
	// Clients that leave free their slots.
	for _, b := range bodies {
		b.Close()
	}
	waitFor(t, func() bool {
		return g.Chat(t, `{"model":"slow","max_completion_tokens":1,"messages":[{"role":"user","content":"x"}]}`).Status == 200
	}, "slots were not released when the clients left")
}

func TestConfiguredLimits(t *testing.T) {
	g := newGateway(t, `
limits: {max_messages: 2, max_tools: 1}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`)
	three := `"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]`
	if r := g.Chat(t, `{"model":"m",`+three+`}`); r.Status != 400 || r.ErrorObject(t)["param"] != "messages" {
		t.Errorf("messages limit: %d %s", r.Status, r.Body)
	}
	tools := `"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]`
	if r := g.Chat(t, `{"model":"m",`+tools+`,"messages":[{"role":"user","content":"a"}]}`); r.Status != 400 || r.ErrorObject(t)["param"] != "tools" {
		t.Errorf("tools limit: %d %s", r.Status, r.Body)
	}
}

func TestResetBeforeHeadersFailsOver(t *testing.T) {
	for _, stream := range []string{"false", "true"} {
		g, a, _ := newPair(t)
		a.Enqueue(openaifake.Reply{ResetBeforeHeaders: true})
		r := g.Chat(t, `{`+hello+`,"stream":`+stream+`}`)
		if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "b/model-b" {
			t.Fatalf("stream=%s: %d %q %s", stream, r.Status, r.Header.Get("X-Fngate-Route"), r.Body)
		}
		if errs := g.logs.Lines(t, "provider_error"); len(errs) != 1 || errs[0]["error_class"] != "unavailable" {
			t.Errorf("stream=%s: %v", stream, errs)
		}
	}
}

func TestTotalTimeoutFailsOver(t *testing.T) {
	a, b := openaifake.New(), openaifake.New()
	defer a.Close()
	defer b.Close()
	g := newGateway(t, fmt.Sprintf(strings.Replace(twoUpstreams, "timeouts: {first_byte: 300ms, idle: 300ms}", "timeouts: {total: 300ms}", 1), a.BaseURL(), b.BaseURL()))
	a.Enqueue(openaifake.Reply{StallBeforeHeaders: 10 * time.Second})
	start := time.Now()
	r := g.Chat(t, `{`+hello+`}`)
	if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "b/model-b" || time.Since(start) > 5*time.Second {
		t.Fatalf("%d %q after %v", r.Status, r.Header.Get("X-Fngate-Route"), time.Since(start))
	}
	if errs := g.logs.Lines(t, "provider_error"); len(errs) != 1 || errs[0]["error_class"] != "timeout" {
		t.Errorf("%v", errs)
	}
	waitFor(t, func() bool { return a.Canceled() == 1 }, "the timed-out upstream call was not cancelled")
}

// A non-stream attempt whose upstream sends no response headers within first_byte fails
// over then, as a stream does, rather than after total.
func TestNonStreamFirstByteFailsOver(t *testing.T) {
	g, a, _ := newPair(t) // first_byte 300ms, total the default 10m
	a.Enqueue(openaifake.Reply{StallBeforeHeaders: 10 * time.Second})
	r := g.Chat(t, `{`+hello+`}`)
	if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "b/model-b" {
		t.Fatalf("%d %q %s", r.Status, r.Header.Get("X-Fngate-Route"), r.Body)
	}
	if errs := g.logs.Lines(t, "provider_error"); len(errs) != 1 || errs[0]["error_class"] != "timeout" || errs[0]["outcome"] != "failover" {
		t.Errorf("%v", errs)
	}
	waitFor(t, func() bool { return a.Canceled() == 1 }, "the stalled upstream call was not cancelled")
}

// Once a non-stream answer's headers are in, first_byte is done: a body slower than it is
// bounded by total alone.
func TestNonStreamBodyAfterHeadersIsNotCutByFirstByte(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(1500 * time.Millisecond): // three times first_byte
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"model-a","choices":[{"index":0,"message":{"role":"assistant","content":"slow body"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
	}))
	defer slow.Close()
	b := openaifake.New()
	defer b.Close()
	g := newGateway(t, fmt.Sprintf(strings.Replace(twoUpstreams, "first_byte: 300ms", "first_byte: 500ms", 1), slow.URL+"/v1", b.BaseURL()))
	r := g.Chat(t, `{`+hello+`}`)
	if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "a/model-a" || !strings.Contains(string(r.Body), "slow body") {
		t.Fatalf("%d %q %s", r.Status, r.Header.Get("X-Fngate-Route"), r.Body)
	}
}

// slowWriter is a client that takes its time over every write.
type slowWriter struct {
	header http.Header
	body   strings.Builder
	delay  time.Duration
}

func (w *slowWriter) Header() http.Header { return w.header }
func (w *slowWriter) WriteHeader(int)     {}
func (w *slowWriter) Write(b []byte) (int, error) {
	time.Sleep(w.delay)
	return w.body.Write(b)
}

// A client that reads slowly holds the gateway's writes back; that must not be blamed on the
// provider: the idle clock runs only while the gateway waits on the upstream.
func TestSlowClientIsNotAnIdleUpstream(t *testing.T) {
	g, a, _ := newPair(t) // idle timeout 300ms
	a.Enqueue(openaifake.Reply{Text: "one two three"})
	w := &slowWriter{header: http.Header{}, delay: 400 * time.Millisecond}
	req, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{`+hello+`,"stream":true}`))
	g.Gateway.ServeHTTP(w, req)
	events := gatewaytest.SSEData(t, w.body.String())
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("slow client got a broken stream: %v", events)
	}
	if errs := g.logs.Lines(t, "provider_error"); len(errs) != 0 {
		t.Errorf("a slow client was logged as a provider error: %v", errs)
	}
}

// A provider that panics never takes the instance down: a 500 in the error shape before any
// output, an error event without [DONE] after it, and the next request is served.
func TestPanickingProvider(t *testing.T) {
	g := newGateway(t, `
connections: {mock: {kind: mock}}
models:
  early: {routes: [{connection: mock, model: panic}]}
  late: {routes: [{connection: mock, model: "panic:2"}]}
  fine: {routes: [{connection: mock, model: echo}]}
`)
	r := g.Chat(t, `{"model":"early","messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 500 || r.ErrorObject(t)["code"] != "internal_error" {
		t.Errorf("panic before output: %d %s", r.Status, r.Body)
	}
	r = g.Chat(t, `{"model":"late","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	events := gatewaytest.SSEData(t, r.Body)
	if last := events[len(events)-1]; r.Status != 200 || !strings.Contains(last, `"code":"internal_error"`) || strings.Contains(string(r.Body), "[DONE]") {
		t.Errorf("panic after output: %d %v", r.Status, events)
	}
	if r := g.Chat(t, `{"model":"fine","messages":[{"role":"user","content":"hi"}]}`); r.Status != 200 {
		t.Errorf("the instance did not survive: %d", r.Status)
	}
}
