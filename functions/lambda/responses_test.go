package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/dynamostore"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/fakeruntime"
	"github.com/fngate/fngate/internal/gatewaytest"
)

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(context.Background(), []byte(yaml+"\n"+catalog("m")), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestResponseStoreChoice(t *testing.T) {
	for _, tc := range []struct {
		yaml, table, want, err string
	}{
		{"", "", "none", ""},
		{"", "stack-responses", "dynamodb table stack-responses", ""},
		{"responses: {store: dynamodb}", "stack-responses", "dynamodb table stack-responses", ""},
		{"responses: {store: dynamodb, table: mine}", "stack-responses", "dynamodb table mine", ""},
		{"responses: {store: none}", "stack-responses", "none", ""},
		{"responses:\n  store: dynamodb\n", "", "", "line 2: responses.store: store dynamodb names no table: set responses.table or RESPONSES_TABLE"},
		{"responses:\n  store: memory\n", "stack-responses", "", "line 2: responses.store: the Lambda function keeps stored responses in DynamoDB (store: dynamodb, or none); memory would be each instance's own"},
		{"responses:\n  store: file\n", "", "", "line 2: responses.store: the Lambda function keeps stored responses in DynamoDB (store: dynamodb, or none); file would be each instance's own"},
		{"responses:\n  store: firestore\n", "", "", "line 2: responses.store: the Lambda function keeps stored responses in DynamoDB"},
	} {
		getenv := func(k string) string { return map[string]string{EnvResponsesTable: tc.table}[k] }
		s, what, err := responseStore(context.Background(), parse(t, tc.yaml), getenv)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q with table %q: err = %v\nwant %s", tc.yaml, tc.table, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "none") {
			t.Errorf("%q with table %q: %v %q, %v; want %q", tc.yaml, tc.table, s, what, err, tc.want)
		}
	}
}

// The store the bootstrap opens is the table named in the environment, reached through the
// Lambda environment's endpoint and credentials, under the config's timeout.
func TestResponseStoreOnMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	table := fmt.Sprint("fngate-responses-", time.Now().UnixNano())
	if err := dynamostore.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	s, _, err := responseStore(ctx, parse(t, "responses: {timeout: 10s, store: dynamodb}"), func(k string) string {
		return map[string]string{EnvResponsesTable: table}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	want := &responsestore.Stored{ID: "resp_1", Owner: "app", Created: now, Expires: now.Add(time.Hour), Response: []byte(`{"id":"resp_1"}`)}
	if err := s.Put(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := dynamostore.New(db, table, dynamostore.Options{}).Get(ctx, "resp_1", "app")
	if err != nil || string(got.Response) != `{"id":"resp_1"}` {
		t.Fatalf("the table holds %+v, %v", got, err)
	}
}

// The bootstrap names its store when ready, and refuses one it cannot share between
// instances before serving anything.
func TestBootstrapResponseStore(t *testing.T) {
	in := start(t, "FNGATE_CONFIG_YAML="+catalog("m"), "FNGATE_URL_AUTH_TYPE=AWS_IAM", EnvResponsesTable+"=stack-responses")
	if _, p, body := in.invoke(t, fakeruntime.Request{Event: chat("m", false)}); p.StatusCode != 200 {
		t.Fatalf("status %d: %s", p.StatusCode, body)
	}
	if !strings.Contains(in.out.String(), `"responses":"dynamodb table stack-responses"`) {
		t.Errorf("the ready line does not name the table:\n%s", in.out.String())
	}

	refused := start(t, "FNGATE_CONFIG_YAML=responses: {store: memory}\n"+catalog("m"), "FNGATE_URL_AUTH_TYPE=AWS_IAM")
	select {
	case <-refused.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the bootstrap started with store: memory")
	}
	if refused.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(refused.out.String(), "keeps stored responses in DynamoDB") {
		t.Errorf("exit %d, output %q", refused.cmd.ProcessState.ExitCode(), refused.out.String())
	}
}

// TestBootstrapResponsesAcrossInstances runs two bootstraps, two Lambda instances, the way the
// templates configure them (RESPONSES_TABLE; the config names no store) against moto: a
// response stored by one is continued, fetched and deleted on the other.
func TestBootstrapResponsesAcrossInstances(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	table := fmt.Sprint("fngate-responses-", time.Now().UnixNano())
	if err := dynamostore.CreateTable(context.Background(), db, table); err != nil {
		t.Fatal(err)
	}
	// moto answers slower than the default timeout on a busy machine.
	const cfg = `
responses: {timeout: 15s}
keys: [{name: app, value: key-lambda-responses-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
	env := []string{"FNGATE_CONFIG_YAML=" + cfg, EnvResponsesTable + "=" + table, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_ENDPOINT_URL=" + endpoint}
	in := []*instance{start(t, env...), start(t, env...)}
	gatewaytest.StoredAcrossInstances(t, func(t *testing.T, i int, method, path, body string) (int, []byte) {
		t.Helper()
		ev := fakeruntime.URLEvent(method, path, map[string]string{"content-type": "application/json", "authorization": "Bearer key-lambda-responses-1"}, body)
		_, p, out := in[i].invoke(t, fakeruntime.Request{Event: ev})
		return p.StatusCode, []byte(out)
	}, "m")
}
