// Package dynamostore keeps stored responses in a DynamoDB table, for the Lambda function.
//
// Table: partition key pk (S), on-demand billing, TTL on expires_at (see CreateTable; the
// IaC declares the same). One item per response:
//
//	pk          the owner and the id (record.Key): another key's response is another item
//	owner, id   as given, checked again on every read
//	model       the gateway model
//	created     RFC 3339 in UTC with nine fractional digits, so that the strings sort as
//	expires     the times do and a condition can compare them
//	expires_at  expires in Unix seconds, for DynamoDB's TTL, which deletes up to days
//	            late: reads and deletes compare expires with the store's clock themselves
//	body        the input and the response, compressed (record.Pack)
//
// An item holds at most 400 KB. A response is compressed (conversations are text, which
// gzip shrinks four to ten times) and refused with ErrTooLarge when its item would still
// exceed MaxItemBytes: splitting one response over several items would make every read a
// multi-item read that DynamoDB does not isolate from a concurrent replace, for the rare
// response of megabytes (mostly inline images) that the gateway then keeps no longer. The
// refusal is checked before any call, so nothing is written.
//
// Reads are strongly consistent: the next turn of a conversation may reach another
// instance milliseconds after the Put. Every call runs under its own timeout.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/record"
)

// Key and attribute names; the IaC declares the same.
const (
	KeyPartition = "pk"
	AttrTTL      = "expires_at"
)

// Limits and defaults.
const (
	// MaxItemBytes is the largest item the store writes: DynamoDB's 400 KB taken as 400,000
	// bytes, below both DynamoDB's own limit (409,600) and moto's (405,000).
	MaxItemBytes = 400_000
	// maxKeyBytes is DynamoDB's limit on a partition key.
	maxKeyBytes = 2048
	// DefaultTimeout bounds a call when Options.Timeout is 0.
	DefaultTimeout = 2 * time.Second
)

// timeLayout has a fixed width, so stored times compare as strings in a condition.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// API is the part of the DynamoDB client the store calls; *dynamodb.Client has it.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is a responsestore.Store on a DynamoDB table.
type Store struct {
	db      API
	table   string
	timeout time.Duration
	now     func() time.Time
}

// New returns a store on an existing table.
func New(db API, table string, opt Options) *Store {
	s := &Store{db: db, table: table, timeout: opt.Timeout, now: opt.Now}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func keyOf(id, owner string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{KeyPartition: str(record.Key(owner, id))}
}

func (s *Store) Put(ctx context.Context, st *responsestore.Stored) error {
	item, err := s.item(st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return s.failed("put", st.ID, ctx, err)
	}
	return nil
}

// item builds st's item, or says why it cannot be stored.
func (s *Store) item(st *responsestore.Stored) (map[string]types.AttributeValue, error) {
	if st.Expires.IsZero() {
		return nil, fmt.Errorf("dynamostore: put %s: no expiry", st.ID)
	}
	pk := record.Key(st.Owner, st.ID)
	if len(pk) > maxKeyBytes {
		return nil, fmt.Errorf("dynamostore: put %s: id and owner make a key of %d bytes, more than DynamoDB's %d", st.ID, len(pk), maxKeyBytes)
	}
	body, err := record.Pack(st.Input, st.Response)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: put %s: %w", st.ID, err)
	}
	item := map[string]types.AttributeValue{
		KeyPartition: str(pk),
		"owner":      str(st.Owner),
		"id":         str(st.ID),
		"created":    str(st.Created.UTC().Format(timeLayout)),
		"expires":    str(st.Expires.UTC().Format(timeLayout)),
		AttrTTL:      &types.AttributeValueMemberN{Value: strconv.FormatInt(st.Expires.Unix(), 10)},
		"body":       &types.AttributeValueMemberB{Value: body},
	}
	if st.Model != "" {
		item["model"] = str(st.Model)
	}
	if n := itemSize(item); n > MaxItemBytes {
		return nil, fmt.Errorf("%w: %s is a DynamoDB item of %d bytes compressed, over the %d the store writes", responsestore.ErrTooLarge, st.ID, n, MaxItemBytes)
	}
	return item, nil
}

// itemSize is an item's size as DynamoDB counts it against the limit: each attribute's
// name and value in bytes. A number is counted as its digits plus one, at least what
// DynamoDB counts (about one byte per two digits, plus one).
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value) + 1
		}
	}
	return n
}

func (s *Store) Get(ctx context.Context, id, owner string) (*responsestore.Stored, error) {
	if len(record.Key(owner, id)) > maxKeyBytes {
		return nil, responsestore.ErrNotFound // Put refuses such keys: none is stored
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyOf(id, owner), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, s.failed("get", id, ctx, err)
	}
	if out.Item == nil {
		return nil, responsestore.ErrNotFound
	}
	st, err := decode(out.Item)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: get %s from table %s: %w", id, s.table, err)
	}
	if st.ID != id || st.Owner != owner || !s.now().Before(st.Expires) {
		return nil, responsestore.ErrNotFound
	}
	return st, nil
}

func (s *Store) Delete(ctx context.Context, id, owner string) error {
	if len(record.Key(owner, id)) > maxKeyBytes {
		return responsestore.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// One conditional call: of concurrent deletes one succeeds, and an expired response
	// still in the table (TTL is late) is not there for the caller.
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &s.table,
		Key:                       keyOf(id, owner),
		ConditionExpression:       aws.String("attribute_exists(pk) AND #expires > :now"),
		ExpressionAttributeNames:  map[string]string{"#expires": "expires"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": str(s.now().UTC().Format(timeLayout))},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return responsestore.ErrNotFound
	}
	if err != nil {
		return s.failed("delete", id, ctx, err)
	}
	return nil
}

// failed says which call failed on which table, and that it timed out when it did.
func (s *Store) failed(op, id string, ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("dynamostore: %s %s: table %s did not answer within %v: %w", op, id, s.table, s.timeout, err)
	}
	return fmt.Errorf("dynamostore: %s %s on table %s: %w", op, id, s.table, err)
}

func decode(item map[string]types.AttributeValue) (*responsestore.Stored, error) {
	st := &responsestore.Stored{}
	var body []byte
	var err error
	text := func(name string) string {
		if v, ok := item[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	st.ID, st.Owner, st.Model = text("id"), text("owner"), text("model")
	if st.Created, err = time.Parse(timeLayout, text("created")); err != nil {
		return nil, fmt.Errorf("created: %w", err)
	}
	if st.Expires, err = time.Parse(timeLayout, text("expires")); err != nil {
		return nil, fmt.Errorf("expires: %w", err)
	}
	if b, ok := item["body"].(*types.AttributeValueMemberB); ok {
		body = b.Value
	}
	if st.Input, st.Response, err = record.Unpack(body); err != nil {
		return nil, err
	}
	return st, nil
}

// CreateTable creates a table with the schema the store expects, waits until it is active
// and turns TTL on: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &table,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(KeyPartition), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(KeyPartition), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: create table %s: %w", table, err)
	}
	w := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, time.Minute); err != nil {
		return fmt.Errorf("dynamostore: wait for table %s: %w", table, err)
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(AttrTTL), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: enable TTL on %s: %w", table, err)
	}
	return nil
}

var _ responsestore.Store = (*Store)(nil)
