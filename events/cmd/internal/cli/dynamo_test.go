package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	ksdynamo "github.com/fngate/fngate/core/keystore/dynamostore"
	rsdynamo "github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
)

// dynamoMode is direct mode on moto_server's DynamoDB, as on Lambda: the keys and the audit
// log in the key store's table, the usage history in the counters table, the route state in
// a table of its own.
func dynamoMode(t *testing.T, endpoint string) mode {
	awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	suffix := time.Now().UnixNano() // a table of their own for each subtest
	keysTable := fmt.Sprintf("fngate-keys-cli-%d", suffix)
	countersTable, routesTable := fmt.Sprintf("fngate-counters-cli-%d", suffix), fmt.Sprintf("fngate-routestate-cli-%d", suffix)
	if err := ksdynamo.CreateTable(ctx, db, keysTable); err != nil {
		t.Fatal(err)
	}
	if err := dynamocounters.CreateTable(ctx, db, countersTable); err != nil {
		t.Fatal(err)
	}
	if err := rsdynamo.CreateTable(ctx, db, routesTable); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "fngate.yaml")
	stores := "key_store: {store: dynamodb, table: " + keysTable + ", region: us-east-1, endpoint: " + endpoint + "}\n" +
		"counters: {store: dynamodb, table: " + countersTable + ", region: us-east-1, endpoint: " + endpoint + "}\n"
	if err := os.WriteFile(cfgPath, []byte(configYAML(stores)), 0o600); err != nil {
		t.Fatal(err)
	}
	history := dynamocounters.New(db, countersTable)
	return mode{name: "dynamodb", actor: "cli:tester",
		env: map[string]string{"FNGATE_CONFIG": cfgPath, "FNGATE_ROUTE_STORE": "dynamodb:" + routesTable},
		addUsage: func(t *testing.T, key string, at time.Time, model string, u counters.Usage) {
			if err := history.AddUsage(context.Background(), key, at, model, u); err != nil {
				t.Fatal(err)
			}
		}}
}

// Direct mode on DynamoDB: the same commands as over HTTP and on files, on the tables the
// functions use.
func TestDirectOnDynamoDB(t *testing.T) {
	endpoint := emulator.Moto(t)
	for name, test := range map[string]func(*testing.T, mode){"usage": usageSteps, "routes": routeSteps, "keys": keySteps} {
		t.Run(name, func(t *testing.T) { test(t, dynamoMode(t, endpoint)) })
	}
}
