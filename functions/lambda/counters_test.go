package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/fakeruntime"
)

// TestBootstrapLimitsAcrossInstances runs two bootstraps, two Lambda instances, the way the
// templates configure them (COUNTERS_TABLE; the config names no store) against
// moto_server: a key's 3 requests a minute are 3 across both, and the fourth, on either, is
// a 429 with OpenAI's headers.
func TestBootstrapLimitsAcrossInstances(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	table := fmt.Sprintf("fngate-counters-%d", time.Now().UnixNano())
	if err := dynamocounters.CreateTable(context.Background(), db, table); err != nil {
		t.Fatal(err)
	}
	// moto answers slower than the default timeout on a busy machine; closed makes a timeout a
	// 503 here rather than an uncounted 200.
	const cfg = `
counters: {timeout: 20s, on_store_error: closed}
keys: [{name: app, value: key-lambda-limits-1, rate: {requests_per_minute: 3}}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
	env := []string{"FNGATE_CONFIG_YAML=" + cfg, EnvCountersTable + "=" + table, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_ENDPOINT_URL=" + endpoint}
	a, b := start(t, env...), start(t, env...)
	ask := func(in *instance) *fakeruntime.Prelude {
		t.Helper()
		ev := fakeruntime.URLEvent("POST", "/v1/chat/completions",
			map[string]string{"content-type": "application/json", "authorization": "Bearer key-lambda-limits-1"},
			`{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
		_, p, _ := in.invoke(t, fakeruntime.Request{Event: ev})
		return p
	}
	// A minute that rolled over between the requests would reopen the limit: start early in
	// one (the sequence takes well under a second).
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 10*time.Second {
		time.Sleep(left)
	}
	var statuses []int
	for _, in := range []*instance{a, b, a, b} {
		statuses = append(statuses, ask(in).StatusCode)
	}
	if fmt.Sprint(statuses) != fmt.Sprint([]int{200, 200, 200, 429}) {
		t.Fatalf("statuses across two instances = %v, want three 200s and a 429", statuses)
	}
	p := ask(a)
	if p.StatusCode != 429 || p.Headers[gateway.HeaderLimitRequests] != "3" || p.Headers[gateway.HeaderRemainingRequests] != "0" || p.Headers["Retry-After"] == "" {
		t.Fatalf("the refusal: %d %v", p.StatusCode, p.Headers)
	}
}
