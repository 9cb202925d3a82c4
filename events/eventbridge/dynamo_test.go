package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// TestRacingFunctionsOnDynamoDB builds the function as main does (setup from the
// environment, the SDK's default config pointed at moto_server), twice, and has both
// instances handle the same EventBridge event at once, as a target retry overlapping the
// first invocation would: exactly one applies, on the real conditional writes.
func TestRacingFunctionsOnDynamoDB(t *testing.T) {
	endpoint := emulator.Moto(t)
	awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const table = "fngate-routestate"
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	if err := dynamostore.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvTable: table, remediation.EnvMode: "apply"}
	getenv := func(k string) string { return env[k] }

	payload := []byte(fmt.Sprintf(`{"version":"0","id":"race-1","detail-type":"ProviderError","source":"fngate","account":"123456789012","time":%q,"region":"us-east-1","resources":[],
		"detail":{"time":%q,"route":"openai/gpt-4.1-mini","connection":"openai","provider":"openai","status":404,"error_class":"not_found","error_code":"model_not_found"}}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339Nano)))
	const n = 4
	var metrics gatewaytest.LogBuffer
	sums := make([]summary, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		h, err := setup(ctx, slog.New(slog.DiscardHandler), &metrics, getenv)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := h.Invoke(ctx, payload)
			if err != nil {
				t.Error(err)
			}
			sums[i] = s
		}()
	}
	close(start)
	wg.Wait()
	applied, dups := 0, 0
	for _, s := range sums {
		applied += s.Applied
		dups += s.Duplicates
	}
	if applied != 1 || dups != n-1 {
		t.Fatalf("applied %d, duplicates %d across %d racing functions: %+v", applied, dups, n, sums)
	}
	if got := strings.Count(metrics.String(), `"Action":"disable","Mode":"apply","RemediationActions":1`); got != 1 {
		t.Fatalf("%d metric lines for one applied action:\n%s", got, metrics.String())
	}
	st, err := dynamostore.New(db, table).Get(ctx, "openai/gpt-4.1-mini")
	if err != nil || st.Status != routestate.Disabled || st.Reason != remediation.ReasonModelNotFound || st.Version != 1 {
		t.Fatalf("stored %+v, %v", st, err)
	}
}
