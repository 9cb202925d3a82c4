package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/events/publish"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/fakeruntime"
)

const selfRepairConfig = `
auth: none
connections:
  a: {kind: mock}
  b: {kind: mock}
models:
  m:
    routing: {policy: ordered, max_attempts: 2}
    routes: [{connection: a, model: echo}, {connection: b, model: echo}]
  flaky:
    routing: {policy: ordered, max_attempts: 2}
    routes: [{connection: a, model: "error:429"}, {connection: b, model: echo}]
`

// TestBootstrapSelfRepairWithDynamoDBAndEventBridge runs the built bootstrap the way the
// deployments configure it (ROUTE_STATE_TABLE, PROVIDER_ERROR_BUS) against moto_server: a
// cooling record written to the table moves the next answers to the second route, and a
// failed attempt reaches an EventBridge rule with publish.RulePattern on that bus.
func TestBootstrapSelfRepairWithDynamoDBAndEventBridge(t *testing.T) {
	endpoint := emulator.Moto(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})
	eb := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})
	q := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})

	// What the templates create: the table, the gateway's bus, the rule on it (here with an
	// SQS target standing in for the remediation function).
	suffix := fmt.Sprint(time.Now().UnixNano())
	table, bus := "fngate-routestate-"+suffix, "fngate-provider-errors-"+suffix
	if err := dynamostore.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("remediation-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	rule := aws.String("provider-errors")
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: rule, EventBusName: aws.String(bus), EventPattern: aws.String(publish.RulePattern)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: rule, EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("remediation"), Arn: aws.String(attrs.Attributes["QueueArn"])}}}); err != nil {
		t.Fatal(err)
	}

	in := start(t, "FNGATE_CONFIG_YAML="+selfRepairConfig, EnvRouteStateTable+"="+table, EnvErrorBus+"="+bus,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_ENDPOINT_URL="+endpoint)
	ask := func(model string) *fakeruntime.Prelude {
		t.Helper()
		_, p, payload := in.invoke(t, fakeruntime.Request{Event: chat(model, true)})
		if p.StatusCode != 200 || content(t, sseData(payload)) != "one two three" {
			t.Fatalf("%s: status %d payload %q", model, p.StatusCode, payload)
		}
		return p
	}

	// No record yet: config order.
	if got := ask("m").Headers[gateway.HeaderRoute]; got != "a/echo" {
		t.Fatalf("before any route state the answer came from %q, want a/echo", got)
	}

	// The remediation function cools the first route (here written directly, as it would).
	now := time.Now().UTC()
	if _, err := dynamostore.New(db, table).Put(ctx, routestate.State{Route: "a/echo", Status: routestate.Cooling,
		Until: now.Add(10 * time.Minute), Reason: "rate_limited", Since: now}, nil); err != nil {
		t.Fatal(err)
	}
	// The cache re-reads the table every 5 s in the background.
	cooled := time.Now()
	for route := ""; route != "b/echo"; {
		if time.Since(cooled) > 15*time.Second {
			t.Fatalf("15 s after the route was cooled in DynamoDB the answer still came from %q, want b/echo", route)
		}
		time.Sleep(200 * time.Millisecond)
		route = ask("m").Headers[gateway.HeaderRoute]
	}
	t.Logf("the bootstrap skipped the cooled route %v after the write", time.Since(cooled).Round(10*time.Millisecond))

	// A failing attempt (failover from a 429) is published to the bus and passes the rule.
	p := ask("flaky")
	if p.Headers[gateway.HeaderRoute] != "b/echo" {
		t.Fatalf("flaky answered from %q, want the failover to b/echo", p.Headers[gateway.HeaderRoute])
	}
	var got *remediation.Record
	for deadline := time.Now().Add(20 * time.Second); got == nil && time.Now().Before(deadline); {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range out.Messages {
			var ev events.EventBridgeEvent
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &ev); err != nil {
				t.Fatalf("%v: %s", err, aws.ToString(msg.Body))
			}
			if ev.Source != publish.Source || ev.DetailType != publish.DetailType {
				t.Fatalf("unexpected event %+v", ev)
			}
			rec, err := remediation.DecodeDetail(ev.Detail)
			if err != nil {
				t.Fatal(err)
			}
			got = &rec
		}
	}
	if got == nil {
		t.Fatalf("no ProviderError event reached the rule's target within 20 s\nbootstrap output:\n%s", in.out.String())
	}
	if got.Route != "a/error:429" || got.ErrorClass != "rate_limited" || got.Status != 429 || got.RequestID != p.Headers["X-Request-Id"] {
		t.Errorf("published %+v; want the 429 on a/error:429 of request %s", *got, p.Headers["X-Request-Id"])
	}
}
