package publish_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/events/publish"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/emulator"
)

// TestPublishThroughMotoRuleToSQS sends real PutEvents calls to moto_server's EventBridge,
// through a rule with RulePattern to an SQS target, and reads what a target receives: the
// pattern passes the classes remediation acts on (with or without a status) and holds back
// the rest, and the detail decodes to the attempt's record.
func TestPublishThroughMotoRuleToSQS(t *testing.T) {
	endpoint := emulator.Moto(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	eb := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})
	q := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})

	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("fngate-remediation")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("fngate-provider-errors"), EventPattern: aws.String(publish.RulePattern)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("fngate-provider-errors"),
		Targets: []ebtypes.Target{{Id: aws.String("remediation"), Arn: aws.String(attrs.Attributes["QueueArn"])}}}); err != nil {
		t.Fatal(err)
	}

	p, err := publish.New(publish.Options{Client: eb})
	if err != nil {
		t.Fatal(err)
	}
	noStatus := attempt(3, "unavailable", 0) // connection refused: no HTTP status
	sent := map[string]*record.Attempt{
		"req_1": attempt(1, "rate_limited", 429),
		"req_2": attempt(2, "auth", 401),
		"req_3": noStatus,
	}
	for _, a := range sent {
		p.OnAttempt(a)
	}
	p.OnAttempt(attempt(4, "bad_request", 400)) // published, but the rule holds it back
	p.OnAttempt(attempt(5, "unavailable", 200)) // no upstream error status: held back
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Published != 5 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}

	received := map[string]remediation.Record{}
	deadline := time.Now().Add(20 * time.Second)
	for len(received) < len(sent) && time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var ev events.EventBridgeEvent
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
				t.Fatalf("%v: %s", err, aws.ToString(m.Body))
			}
			if ev.Source != publish.Source || ev.DetailType != publish.DetailType || ev.ID == "" {
				t.Fatalf("envelope %+v", ev)
			}
			rec, err := remediation.DecodeDetail(ev.Detail)
			if err != nil {
				t.Fatal(err)
			}
			received[rec.RequestID] = rec
		}
	}
	// Anything else on the queue was let through by the rule.
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Messages {
		t.Errorf("unexpected delivery: %s", aws.ToString(m.Body))
	}
	for id, a := range sent {
		if got, ok := received[id]; !ok || got != publish.Detail(a) {
			t.Errorf("%s: received %+v, want %+v", id, got, publish.Detail(a))
		}
	}
	for _, id := range []string{"req_4", "req_5"} {
		if _, ok := received[id]; ok {
			t.Errorf("the rule passed %s", id)
		}
	}
	if len(received) != len(sent) {
		t.Fatalf("received %d of %d events", len(received), len(sent))
	}
}
