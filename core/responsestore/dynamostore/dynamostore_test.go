package dynamostore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/internal/dynamotable"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/record"
	"github.com/fngate/fngate/core/responsestore/internal/storetest"
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
		return New(db, newTable(t, db), Options{Now: now, Timeout: 20 * time.Second, MaxBody: testMaxBody})
	}, storetest.Options{Limit: testMaxBody})
}

// The head's limit is exact: an item of MaxItemBytes as the store counts it is written
// whole (so the count is never below DynamoDB's); one byte more goes into parts, which read
// back whole, are replaced by a smaller response, and are deleted with their head.
func TestItemAtTheLimitAndParts(t *testing.T) {
	db := client(emulator.Moto(t))
	table := newTable(t, db)
	calls := &countingAPI{API: db}
	s := New(calls, table, Options{Timeout: 20 * time.Second})
	ctx := context.Background()
	now := time.Now()
	st := &responsestore.Stored{ID: "resp_edge", Owner: "app", Created: now, Expires: now.Add(time.Hour),
		Response: []byte(`{"id":"resp_edge","output":"` + strings.Repeat("x", 10) + `"}`)}
	// Pad the model, which counts byte for byte, up to the limit.
	items, err := s.items(st)
	if err != nil {
		t.Fatal(err)
	}
	st.Model = strings.Repeat("m", MaxItemBytes-dynamotable.ItemSize(items[0])-len("model"))
	if items, err = s.items(st); err != nil || len(items) != 1 || dynamotable.ItemSize(items[0]) != MaxItemBytes {
		t.Fatalf("padded item: %d items, %v; want one of exactly %d bytes", len(items), err, MaxItemBytes)
	}
	if err := s.Put(ctx, st); err != nil {
		t.Fatalf("an item of exactly MaxItemBytes was refused: %v", err)
	}
	if got, err := s.Get(ctx, st.ID, st.Owner); err != nil || got.Model != st.Model {
		t.Fatalf("Get: %v", err)
	}
	if calls.puts.Load() != 1 {
		t.Errorf("an item within the limit took %d PutItem calls, want 1", calls.puts.Load())
	}

	// Over one item: the body moves to parts, written before the head.
	st.Model = strings.Repeat("m", 100)
	st.Input = random(MaxItemBytes)
	if err := s.Put(ctx, st); err != nil {
		t.Fatal(err)
	}
	if calls.puts.Load() != 1+3 || calls.lastPut.Load() != record.Key(st.Owner, st.ID) {
		t.Errorf("a response over one item took %d PutItem calls, the last on %v; want 3 (two parts, then the head)", calls.puts.Load()-1, calls.lastPut.Load())
	}
	got, err := s.Get(ctx, st.ID, st.Owner)
	if err != nil || string(got.Input) != string(st.Input) {
		t.Fatalf("Get of a response in parts: %v", err)
	}
	if n := count(t, db, table); n != 3 {
		t.Errorf("the table holds %d items, want the head and two parts", n)
	}
	must(t, s.Delete(ctx, st.ID, st.Owner))
	if n := count(t, db, table); n != 0 {
		t.Errorf("after Delete the table holds %d items, want none: the parts go with the head", n)
	}
}

// random is n bytes gzip cannot shrink.
func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func count(t *testing.T, db *dynamodb.Client, table string) int {
	t.Helper()
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	return int(out.Count)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type countingAPI struct {
	API
	puts    atomic.Int32
	lastPut atomic.Value // the key of the last PutItem
}

func (c *countingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.puts.Add(1)
	c.lastPut.Store(in.Item[KeyPartition].(*types.AttributeValueMemberS).Value)
	return c.API.PutItem(ctx, in, optFns...)
}

// Beyond MaxBodyBytes a response is refused before any call.
func TestTooLargeIsRefusedBeforeAnyCall(t *testing.T) {
	calls := &countingAPI{}
	now := time.Now()
	st := &responsestore.Stored{ID: "resp_huge", Owner: "app", Created: now, Expires: now.Add(time.Hour),
		Response: random(MaxBodyBytes + 1)}
	if err := New(calls, "t", Options{}).Put(context.Background(), st); !errors.Is(err, responsestore.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

// A table that does not answer fails each call after the store's timeout, as a failure,
// never as "not found"; a refused connection fails at once.
func TestUnreachableTable(t *testing.T) {
	awstest.Isolate(t, "test")
	for name, endpoint := range map[string]string{
		"silent":  "http://" + loopback.Blackhole(t),
		"refused": "http://127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Unreachable(t, New(client(endpoint), "fngate-responses", Options{Timeout: 300 * time.Millisecond}))
		})
	}
}

// testMaxBody is the conformance suite's limit: above one item, so parts are exercised, and
// far below MaxBodyBytes, whose nine megabytes through moto under the race detector take
// minutes. TestRefusesWhatExceedsMaxBodyBytes covers the real limit without moto.
const testMaxBody = 2 << 20
