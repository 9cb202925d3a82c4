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

	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/dynamostore"
	"github.com/fngate/fngate/core/keystore/internal/storetest"
	"github.com/fngate/fngate/internal/emulator"
)

// TestStoreAgainstMoto runs the key store contract on moto_server's DynamoDB, one fresh
// table per subtest.
func TestStoreAgainstMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) keystore.Store {
		table := fmt.Sprintf("fngate-keys-%d-%d", time.Now().UnixNano(), n.Add(1))
		if err := dynamostore.CreateTable(ctx, db, table); err != nil {
			t.Fatal(err)
		}
		return dynamostore.New(db, table, dynamostore.Options{Timeout: 30 * time.Second})
	}, storetest.Options{Fill: func(t *testing.T, s keystore.Store, keys []*keystore.Key) {
		if err := s.(*dynamostore.Store).Fill(ctx, keys); err != nil {
			t.Fatal(err)
		}
	}})
}
