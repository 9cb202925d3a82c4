package dynamostore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/mcpsessions/internal/storetest"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/loopback"
)

func client(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   awsconf.HTTPClient(), // as the functions' clients (see awsconf.SafeBodies)
	})
}

var tables atomic.Int64

func newTable(t *testing.T, db *dynamodb.Client) string {
	t.Helper()
	table := fmt.Sprintf("fngate-mcp-sessions-%d-%d", time.Now().UnixNano(), tables.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	return table
}

// TestStoreAgainstMoto runs the Store contract on moto's DynamoDB, one fresh table per
// subtest.
func TestStoreAgainstMoto(t *testing.T) {
	awstest.Isolate(t, "test", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	db := client(emulator.Moto(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) mcpsessions.Store {
		// moto answers one request at a time (see emulator.Moto): concurrent calls queue.
		return New(db, newTable(t, db), Options{Now: now, Timeout: 20 * time.Second})
	})
}

// The item is what the IaC and the package doc say: TTL in Unix seconds, expires in UTC.
func TestItemLayout(t *testing.T) {
	awstest.Isolate(t, "test", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	db := client(emulator.Moto(t))
	table := newTable(t, db)
	exp := time.Date(2026, 11, 29, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))
	s := New(db, table, Options{Now: func() time.Time { return exp.Add(-time.Hour) }, Timeout: 20 * time.Second})
	ctx := context.Background()
	if err := s.Put(ctx, mcpsessions.Session{ID: "sess_1", Owner: "key_app", State: []byte(`{}`), Expires: exp}); err != nil {
		t.Fatal(err)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: keyAt("sess_1"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := out.Item[AttrTTL].(*types.AttributeValueMemberN); v == nil || v.Value != fmt.Sprint(exp.Unix()) {
		t.Errorf("%s = %#v, want N %d", AttrTTL, out.Item[AttrTTL], exp.Unix())
	}
	if v, _ := out.Item["expires"].(*types.AttributeValueMemberS); v == nil || v.Value != "2026-11-29T12:00:00.123456789Z" {
		t.Errorf("expires = %#v, want S 2026-11-29T12:00:00.123456789Z", out.Item["expires"])
	}
	if got, err := s.Get(ctx, "sess_1"); err != nil || !got.Expires.Equal(exp) {
		t.Errorf("Get: %v, %v; want expires %v to the nanosecond", got.Expires, err, exp)
	}
}

// A table that does not answer fails each call after the store's timeout, as a failure,
// never as "not found"; a refused connection fails at once.
func TestUnreachableTable(t *testing.T) {
	awstest.Isolate(t, "test", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	for name, endpoint := range map[string]string{
		"silent":  "http://" + loopback.Blackhole(t),
		"refused": "http://127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Unreachable(t, New(client(endpoint), "fngate-mcp-sessions", Options{Timeout: 300 * time.Millisecond}), 10*time.Second)
		})
	}
}
