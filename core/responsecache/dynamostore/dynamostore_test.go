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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/dynamotable"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/internal/pack"
	"github.com/fngate/fngate/core/responsecache/internal/storetest"
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
	table := fmt.Sprintf("fngate-cache-%d-%d", time.Now().UnixNano(), tables.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	return table
}

// TestStoreAgainstMoto runs the Store contract on moto's DynamoDB, one fresh table per
// subtest. An item holds a little less than MaxItemBytes of body: the key, the times and
// the attributes' names take the rest.
func TestStoreAgainstMoto(t *testing.T) {
	db := client(emulator.Moto(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsecache.Store {
		// moto answers one request at a time (see emulator.Moto): a call may wait for others.
		return New(db, newTable(t, db), Options{Now: now, Timeout: 20 * time.Second})
	}, storetest.Options{Limit: MaxItemBytes - 300, Compresses: true})
}

// The item's limit is exact: a body that makes an item of MaxItemBytes as the store counts
// it is written as it is (and moto takes it, so the count is never below DynamoDB's); one
// byte more is compressed when that fits, and refused before any call when it does not.
func TestItemAtTheLimit(t *testing.T) {
	db := client(emulator.Moto(t))
	table := newTable(t, db)
	calls := &countingAPI{API: db}
	s := New(calls, table, Options{Timeout: 20 * time.Second})
	ctx := context.Background()
	now := time.Now()
	e := &responsecache.Entry{Key: storetest.Key(), Model: "m", Created: now, Expires: now.Add(time.Hour)}
	it, err := s.item(e)
	if err != nil {
		t.Fatal(err)
	}
	e.Body = storetest.Random(MaxItemBytes - dynamotable.ItemSize(it) - len("body")) // an empty body has no attribute
	if it, err = s.item(e); err != nil || dynamotable.ItemSize(it) != MaxItemBytes {
		t.Fatalf("padded item: %v; want one of exactly %d bytes", err, MaxItemBytes)
	}
	if err := s.Put(ctx, e); err != nil {
		t.Fatalf("an item of exactly MaxItemBytes was refused: %v", err)
	}
	if stored := raw(t, db, table, e.Key); stored["gz"].(*types.AttributeValueMemberBOOL).Value {
		t.Error("a body that fits as it is was compressed")
	}
	if got, err := s.Get(ctx, e.Key); err != nil || string(got.Body) != string(e.Body) {
		t.Fatalf("Get: %v", err)
	}

	// One byte more of what compresses: stored compressed, read back as it was.
	e.Body = []byte(strings.Repeat("a", len(e.Body)+1))
	if err := s.Put(ctx, e); err != nil {
		t.Fatal(err)
	}
	stored := raw(t, db, table, e.Key)
	if !stored["gz"].(*types.AttributeValueMemberBOOL).Value || len(stored["body"].(*types.AttributeValueMemberB).Value) >= len(e.Body) {
		t.Error("a body over the item's limit was not stored compressed")
	}
	if got, err := s.Get(ctx, e.Key); err != nil || string(got.Body) != string(e.Body) {
		t.Fatalf("Get of a compressed body: %v", err)
	}

	// One byte more of what does not: refused, with no call made.
	before := calls.puts.Load()
	e.Body = storetest.Random(len(e.Body))
	if err := s.Put(ctx, e); !errors.Is(err, responsecache.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if calls.puts.Load() != before {
		t.Error("a body too large for the item was sent to DynamoDB")
	}
}

func raw(t *testing.T, db *dynamodb.Client, table, key string) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
		KeyPartition: &types.AttributeValueMemberS{Value: key}}})
	if err != nil || out.Item == nil {
		t.Fatalf("GetItem %s: %v", key, err)
	}
	return out.Item
}

type countingAPI struct {
	API
	puts atomic.Int32
}

func (c *countingAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.puts.Add(1)
	return c.API.PutItem(ctx, in, optFns...)
}

// Beyond pack.MaxBody a body is refused before any call, however well it compresses, and so
// is a key that is not one (the API here is nil: a call would panic).
func TestRefusedBeforeAnyCall(t *testing.T) {
	now := time.Now()
	s := New(&countingAPI{}, "t", Options{})
	for name, e := range map[string]*responsecache.Entry{
		"huge":    {Key: storetest.Key(), Created: now, Expires: now.Add(time.Hour), Body: make([]byte, pack.MaxBody+1)},
		"bad key": {Key: "../" + storetest.Key()[3:], Created: now, Expires: now.Add(time.Hour), Body: []byte("x")},
	} {
		if err := s.Put(context.Background(), e); err == nil || name == "huge" && !errors.Is(err, responsecache.ErrTooLarge) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := s.Get(context.Background(), "a/b"); !errors.Is(err, responsecache.ErrNotFound) {
		t.Errorf("Get under a key no entry has: err = %v, want ErrNotFound", err)
	}
}

// A table that does not answer fails each call after the store's timeout, as a failure,
// never as a miss; a refused connection fails at once.
func TestUnreachableTable(t *testing.T) {
	awstest.Isolate(t, "test")
	for name, endpoint := range map[string]string{
		"silent":  "http://" + loopback.Blackhole(t),
		"refused": "http://127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Unreachable(t, New(client(endpoint), "fngate-cache", Options{Timeout: 300 * time.Millisecond}), 5*time.Second)
		})
	}
}

// Open takes the table and the timeout from the config, and refuses a config without a
// table before loading anything.
func TestOpen(t *testing.T) {
	endpoint := emulator.Moto(t)
	awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
	if _, err := Open(context.Background(), awsconf.FromEnvironment, config.ResponseCache{}); err == nil || !strings.Contains(err.Error(), "response_cache.table") {
		t.Errorf("Open without a table: %v", err)
	}
	db := client(endpoint)
	table := newTable(t, db)
	var c config.ResponseCache
	c.Kind, c.Table, c.Timeout = config.StoreDynamoDB, table, config.Duration(10*time.Second)
	s, err := Open(context.Background(), awsconf.FromEnvironment, c)
	if err != nil {
		t.Fatal(err)
	}
	if s.timeout != 10*time.Second || s.table != table {
		t.Errorf("opened table %s with timeout %v", s.table, s.timeout)
	}
	now := time.Now()
	e := &responsecache.Entry{Key: storetest.Key(), Created: now, Expires: now.Add(time.Hour), Body: []byte("answer")}
	if err := s.Put(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if got, err := New(db, table, Options{Timeout: 10 * time.Second}).Get(context.Background(), e.Key); err != nil || string(got.Body) != "answer" {
		t.Fatalf("the table holds %+v, %v", got, err)
	}
	if New(db, table, Options{}).timeout != config.DefaultCacheTimeout {
		t.Error("a store without a timeout does not take the cache's default")
	}
}
