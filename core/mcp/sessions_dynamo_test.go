package mcp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/mcpsessions/dynamostore"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
)

// The Lambda function's store: the sessions on DynamoDB (moto), every message of the session
// through one of two instances.
func TestSessionsOnDynamoDB(t *testing.T) {
	awstest.Isolate(t, "test", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	db := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(emulator.Moto(t)),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTPClient: awsconf.HTTPClient(),
	})
	table := fmt.Sprintf("fngate-mcp-sessions-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	SessionsContinuedOnAnotherInstance(t, dynamostore.New(db, table, dynamostore.Options{Timeout: 15 * time.Second}))
}
