package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/events/publish"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/golden"
)

const e2eConfig = `
connections:
  mock: {kind: mock}
models:
  demo/chat:
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: mock, model: "error:429"}
      - {connection: mock, model: echo}
`

const (
	failing = "mock/error:429"
	healthy = "mock/echo"
)

// TestEndToEnd runs the whole loop in one process: the gateway's first route fails with 429;
// every failed attempt goes, as the EventBridge event the publisher would send, to this
// function's handler on a delivery goroutine; the burst cools the route in the store; the
// gateway's route-state cache picks it up and the next request skips the route; the sweep
// re-enables it once the cooldown is over.
func TestEndToEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clockNS atomic.Int64
	clockNS.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clockNS.Load()) }

	store := routestate.NewMemory()
	const refresh = 20 * time.Millisecond
	cache := routestate.NewCache(store, routestate.CacheOptions{Refresh: refresh})
	cache.Start(ctx)
	defer cache.Close()

	var handlerLogs gatewaytest.LogBuffer
	hlog := handlerLogs.Logger()
	policy := remediation.DefaultPolicy()
	h := &handler{
		engine: remediation.New(store, remediation.Options{Config: remediation.Config{Mode: remediation.Apply, Policy: policy}, Logger: hlog, Now: now}),
		log:    hlog,
	}

	// Delivery: OnAttempt runs on the request path, so it only queues; a goroutine plays
	// EventBridge and invokes the function with the envelope.
	type delivered struct {
		s   summary
		err error
		at  time.Time
	}
	queue := make(chan json.RawMessage, 64)
	results := make(chan delivered, 64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for payload := range queue {
			s, err := h.Invoke(ctx, payload)
			results <- delivered{s, err, time.Now()}
		}
	}()
	defer func() { close(queue); wg.Wait() }()
	var failures []time.Time
	var fmu sync.Mutex
	var eventSeq atomic.Int64
	onAttempt := func(a *record.Attempt) {
		if !a.Failed() {
			return
		}
		fmu.Lock()
		failures = append(failures, time.Now())
		fmu.Unlock()
		queue <- envelope(t, fmt.Sprintf("e2e-%04d", eventSeq.Add(1)), a)
	}

	cfg, err := config.Parse(ctx, []byte(e2eConfig), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.Registry{}
	mock.Register(reg)
	gwLog := &gatewaytest.LogBuffer{}
	gw, err := gateway.New(cfg, gateway.Options{
		Registry:   reg,
		Logger:     telemetry.NewLogger(gwLog, telemetry.FormatCloudWatch, nil),
		Now:        now,
		RouteState: cache,
		OnAttempt:  onAttempt,
	})
	if err != nil {
		t.Fatal(err)
	}
	ask := func() (route, attempts string, requestLog string) {
		t.Helper()
		gwLog.Reset()
		rr := httptest.NewRecorder()
		gw.ServeHTTP(rr, httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
			strings.NewReader(`{"model":"demo/chat","messages":[{"role":"user","content":"hello there"}]}`)))
		if rr.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rr.Code, rr.Body)
		}
		return rr.Header().Get(gateway.HeaderRoute), rr.Header().Get(gateway.HeaderAttempts), gwLog.String()
	}

	// 1. The burst: each request fails over from the 429 route and logs a provider error.
	for i := range policy.BurstErrors {
		route, attempts, logs := ask()
		if route != healthy || attempts != "2" || !strings.Contains(logs, `"msg":"provider_error"`) || !strings.Contains(logs, `"route":"`+failing+`"`) {
			t.Fatalf("request %d: route %s after %s attempts; log:\n%s", i+1, route, attempts, logs)
		}
		clockNS.Add(int64(100 * time.Millisecond))
	}
	fmu.Lock()
	burstDone := failures[len(failures)-1]
	nFailures := len(failures)
	fmu.Unlock()
	if nFailures != policy.BurstErrors {
		t.Fatalf("%d failed attempts, want %d", nFailures, policy.BurstErrors)
	}

	// 2. The handler cools the route.
	var applied delivered
	for range policy.BurstErrors {
		d := <-results
		if d.err != nil {
			t.Fatal(d.err)
		}
		if d.s.Applied > 0 {
			applied = d
		}
	}
	if applied.s.Applied != 1 {
		t.Fatalf("no delivery applied a change; handler log:\n%s", handlerLogs.String())
	}
	st, _ := store.Get(ctx, failing)
	if st.Status != routestate.Cooling || st.Reason != "rate_limited" {
		t.Fatalf("stored %+v", st)
	}
	for !isCooling(cache, failing) {
		if time.Since(applied.at) > 2*time.Second {
			t.Fatal("the gateway's cache never saw the cooled route")
		}
		time.Sleep(time.Millisecond)
	}
	visible := time.Now()
	t.Logf("burst -> route cooled in the store: %v; -> skipped by the gateway (cache refresh %v): %v",
		applied.at.Sub(burstDone).Round(time.Microsecond), refresh, visible.Sub(burstDone).Round(time.Microsecond))

	// 3. The next request skips the cooled route: one attempt, no provider error.
	route, attempts, logs := ask()
	if route != healthy || attempts != "1" || strings.Contains(logs, `"msg":"provider_error"`) ||
		!strings.Contains(logs, `"skipped":"`+failing+`: cooling (rate_limited)"`) {
		t.Fatalf("after cooling: route %s after %s attempts; log:\n%s", route, attempts, logs)
	}

	// 4. A sweep during the cooldown changes nothing; after it, the route is re-enabled.
	sweep := golden.Read(t, "scheduled_event.json")
	if _, err := h.Invoke(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	if st, _ := store.Get(ctx, failing); st.Status != routestate.Cooling {
		t.Fatalf("sweep during the cooldown: %+v", st)
	}
	clockNS.Store(st.Until.Add(time.Second).UnixNano())
	if s, err := h.Invoke(ctx, sweep); err != nil || s.Applied != 1 {
		t.Fatalf("sweep after the cooldown: %+v, %v", s, err)
	}
	if st, _ := store.Get(ctx, failing); st.Status != routestate.Active || st.Reason != "" {
		t.Fatalf("after the sweep: %+v", st)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		if s, ok := cache.Lookup(failing); ok && s.Status == routestate.Active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cache never saw the re-enabled route")
		}
		time.Sleep(time.Millisecond)
	}
	// 5. Traffic tries the first route again.
	route, attempts, logs = ask()
	if route != healthy || attempts != "2" || !strings.Contains(logs, `"route":"`+failing+`"`) {
		t.Fatalf("after the sweep: route %s after %s attempts; log:\n%s", route, attempts, logs)
	}
	<-results // that attempt's delivery: counted toward a new burst, no change
}

func isCooling(c *routestate.Cache, route string) bool {
	s, ok := c.Lookup(route)
	return ok && s.Status == routestate.Cooling
}

// envelope is the event EventBridge delivers for the publisher's PutEvents entry.
func envelope(t *testing.T, id string, a *record.Attempt) json.RawMessage {
	detail, err := json.Marshal(publish.Detail(a))
	if err != nil {
		t.Error(err)
	}
	b, err := json.Marshal(events.EventBridgeEvent{
		Version: "0", ID: id, DetailType: publish.DetailType, Source: publish.Source,
		AccountID: "123456789012", Time: a.Time.UTC().Truncate(time.Second), Region: "eu-west-1",
		Resources: []string{}, Detail: detail,
	})
	if err != nil {
		t.Error(err)
	}
	return b
}
