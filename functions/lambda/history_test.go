package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/fakeruntime"
)

// TestBootstrapKeepsUsageHistory runs two bootstraps as the templates configure them
// (COUNTERS_TABLE, no counters section, a key without limits) against moto_server: each
// request's usage is in the table as soon as its invoke has ended, since the process may be
// frozen right after (flushed with the response, flush.go), whichever instance served it.
func TestBootstrapKeepsUsageHistory(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	table := fmt.Sprintf("fngate-history-%d", time.Now().UnixNano())
	if err := dynamocounters.CreateTable(context.Background(), db, table); err != nil {
		t.Fatal(err)
	}
	const cfg = `
keys: [{name: app, value: key-lambda-history-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
	// The bootstraps reach moto through a proxy that holds each write a while: a write left
	// to the background would land after the next poll, when a real Lambda may have frozen
	// the process.
	target, _ := url.Parse(endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var written time.Time // the last write's end
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write := strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem")
		if write {
			time.Sleep(300 * time.Millisecond)
		}
		proxy.ServeHTTP(w, r)
		if write {
			mu.Lock()
			written = time.Now()
			mu.Unlock()
		}
	}))
	t.Cleanup(slow.Close)
	env := []string{"FNGATE_CONFIG_YAML=" + cfg, EnvCountersTable + "=" + table, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_ENDPOINT_URL=" + slow.URL}
	a, b := start(t, env...), start(t, env...)
	history := dynamocounters.New(db, table)
	for i, in := range []*instance{a, b, a} {
		stream := i == 1
		ev := fakeruntime.URLEvent("POST", "/v1/chat/completions",
			map[string]string{"content-type": "application/json", "authorization": "Bearer key-lambda-history-1"},
			fmt.Sprintf(`{"model":"m","stream":%v,"max_completion_tokens":5,"messages":[{"role":"user","content":"one two"}]}`, stream))
		inv, p, _ := in.invoke(t, fakeruntime.Request{Event: ev})
		if p.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, p.StatusCode)
		}
		// Read once the bootstrap asks for the next event, when Lambda may freeze it: the
		// invoke has ended, so the write must have been made.
		polled := false
		for deadline := time.Now().Add(5 * time.Second); !polled && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			for _, at := range in.rt.Polls() {
				polled = polled || at.After(inv.Delivered)
			}
		}
		if !polled {
			t.Fatal("the bootstrap did not ask for the next event")
		}
		// ...and the client did not wait for it: the response ended before the write did.
		res, _ := inv.Wait(time.Second)
		mu.Lock()
		if !res.Finished.Before(written) {
			t.Errorf("request %d: the response ended %v after its usage was written: the write held back the client", i+1, res.Finished.Sub(written))
		}
		mu.Unlock()
		now := time.Now()
		rows, err := history.Usage(context.Background(), "app", now.Add(-time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		var got counters.Usage
		for _, r := range rows {
			got.Add(r.Usage)
		}
		if got.Requests != int64(i+1) || got.InputTokens == 0 || got.OutputTokens == 0 {
			t.Fatalf("after invoke %d the history holds %+v (%+v); want %d requests with their tokens", i+1, got, rows, i+1)
		}
	}
}
