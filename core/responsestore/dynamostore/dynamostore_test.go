package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/storetest"
	"github.com/fngate/fngate/internal/emulator"
)

func client(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

var tables atomic.Int64

func newTable(t *testing.T, db *dynamodb.Client) string {
	t.Helper()
	table := fmt.Sprintf("fngate-responses-%d-%d", time.Now().UnixNano(), tables.Add(1))
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
	db := client(emulator.Moto(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsestore.Store {
		// moto answers one request at a time (see emulator.Moto): the concurrent subtests
		// queue, so a call may wait for the others.
		return New(db, newTable(t, db), Options{Now: now, Timeout: 20 * time.Second})
	}, storetest.Options{Limit: MaxItemBytes - 512})
}

// The limit is exact: an item of MaxItemBytes as the store counts it is written (so the
// count is never below DynamoDB's), one byte more is refused before any call.
func TestItemAtTheLimit(t *testing.T) {
	db := client(emulator.Moto(t))
	s := New(db, newTable(t, db), Options{Timeout: 20 * time.Second})
	ctx := context.Background()
	now := time.Now()
	st := &responsestore.Stored{ID: "resp_edge", Owner: "app", Created: now, Expires: now.Add(time.Hour),
		Response: []byte(`{"id":"resp_edge","output":"` + strings.Repeat("x", 10) + `"}`)}
	// Pad the model, which counts byte for byte, up to the limit.
	item, err := s.item(st)
	if err != nil {
		t.Fatal(err)
	}
	st.Model = strings.Repeat("m", MaxItemBytes-itemSize(item)-len("model"))
	if item, err = s.item(st); err != nil || itemSize(item) != MaxItemBytes {
		t.Fatalf("padded item: %d bytes, %v; want exactly %d", itemSize(item), err, MaxItemBytes)
	}
	if err := s.Put(ctx, st); err != nil {
		t.Fatalf("an item of exactly MaxItemBytes was refused: %v", err)
	}
	got, err := s.Get(ctx, st.ID, st.Owner)
	if err != nil || got.Model != st.Model {
		t.Fatalf("Get: %v", err)
	}
	st.Model += "m"
	calls := &countingAPI{API: db}
	if err := New(calls, s.table, Options{}).Put(ctx, st); !errors.Is(err, responsestore.ErrTooLarge) {
		t.Fatalf("an item one byte over: err = %v, want ErrTooLarge", err)
	}
	if calls.n.Load() != 0 {
		t.Errorf("the refused item was sent to DynamoDB")
	}
}

type countingAPI struct {
	API
	n atomic.Int32
}

func (c *countingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n.Add(1)
	return c.API.PutItem(ctx, in, optFns...)
}

// A table that does not answer fails each call after the store's timeout, as a failure,
// never as "not found"; a refused connection fails at once.
func TestUnreachableTable(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for name, endpoint := range map[string]string{
		"silent":  "http://" + storetest.Blackhole(t),
		"refused": "http://127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Unreachable(t, New(client(endpoint), "fngate-responses", Options{Timeout: 300 * time.Millisecond}))
		})
	}
}
