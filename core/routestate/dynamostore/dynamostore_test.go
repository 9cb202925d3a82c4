package dynamostore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/core/routestate/internal/storetest"
	"github.com/fngate/fngate/internal/emulator"
)

// TestStoreAgainstMoto runs the Store contract on moto_server's DynamoDB, one fresh table per
// subtest.
func TestStoreAgainstMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   awsconf.HTTPClient(), // as the functions' clients (see awsconf.SafeBodies)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) routestate.Store {
		table := fmt.Sprintf("fngate-routestate-%d-%d", time.Now().UnixNano(), n.Add(1))
		if err := dynamostore.CreateTable(ctx, db, table); err != nil {
			t.Fatal(err)
		}
		return dynamostore.New(db, table)
	})
}
