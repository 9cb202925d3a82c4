// Package dynamostore keeps stored responses in a DynamoDB table, for the Lambda function
// (and a local server that names it).
//
// Table: partition key pk (S), on-demand billing, TTL on expires_at (see CreateTable; the
// IaC declares the same). A response is one head item, and when its body does not fit in
// the head, parts:
//
//	pk          the owner and the id (record.Key): another key's response is another item
//	owner, id   as given, checked again on every read
//	model       the gateway model
//	created     RFC 3339 in UTC with nine fractional digits, so that the strings sort as
//	expires     the times do and a condition can compare them
//	expires_at  expires in Unix seconds, for DynamoDB's TTL, which deletes up to days
//	            late: reads and deletes compare expires with the store's clock themselves
//	body        the input and the response, compressed (record.Pack), when it fits
//	gen, parts  otherwise: the body is in parts items pk = record.PartKey(pk, gen, i),
//	            each with body and expires_at
//
// An item holds at most 400 KB; gzip takes recorded agent conversations (Claude Code,
// Codex) to a third or so. A body that does not fit in the head is cut into parts, written
// first (in parallel) and the head that names them last, so a reader, which finds parts
// only through a head, reads a whole response or none (see record.Generation); a response
// of up to MaxBodyBytes compressed is stored, a larger one refused with ErrTooLarge before
// any call. Parts whose head was never written (a failed Put) or was replaced are left to
// TTL: nothing reads them. Deleting a response deletes its head, then its parts.
//
// Reads are strongly consistent: the next turn of a conversation may reach another
// instance milliseconds after the Put. Each Put, Get and Delete runs under the store's
// timeout. IAM: GetItem, PutItem and DeleteItem on the table, nothing else.
package dynamostore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/dynamotable"
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
	// MaxItemBytes is the largest item the store writes (see dynamotable.MaxItemBytes).
	MaxItemBytes = dynamotable.MaxItemBytes
	// partBytes is the body a part carries: an item's limit less its key and the names.
	partBytes = MaxItemBytes - 4096
	// MaxBodyBytes is the largest compressed body stored.
	MaxBodyBytes = record.MaxBody
	// concurrency bounds the parts one call reads or writes at a time.
	concurrency = 8
	// maxKeyBytes is DynamoDB's limit on a partition key, less what a part key adds.
	maxKeyBytes = 2048 - 64
)

// API is the part of the DynamoDB client the store calls; *dynamodb.Client has it.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means config.DefaultStoreTimeout, the responses.timeout
	// a config leaves unset.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
	// MaxBody is the largest compressed body Put keeps, at most MaxBodyBytes; 0 means
	// MaxBodyBytes. Tests lower it so that crossing the limit is a megabyte, not nine, of
	// data through an emulator under the race detector.
	MaxBody int
}

// Store is a responsestore.Store on a DynamoDB table.
type Store struct {
	db      API
	table   string
	timeout time.Duration
	now     func() time.Time
	maxBody int
}

// New returns a store on an existing table.
func New(db API, table string, opt Options) *Store {
	s := &Store{db: db, table: table, timeout: opt.Timeout, now: opt.Now}
	if s.timeout <= 0 {
		s.timeout = config.DefaultStoreTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody = opt.MaxBody; s.maxBody <= 0 || s.maxBody > MaxBodyBytes {
		s.maxBody = MaxBodyBytes
	}
	return s
}

type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func keyAt(pk string) item { return item{KeyPartition: str(pk)} }

func (s *Store) Put(ctx context.Context, st *responsestore.Stored) error {
	items, err := s.items(st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	put := func(it item) error {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it})
		return err
	}
	// The parts, then the head that names them.
	parts := items[1:]
	if err := record.Each(len(parts), concurrency, func(i int) error { return put(parts[i]) }); err != nil {
		return s.failed("put", st.ID, ctx, err)
	}
	if err := put(items[0]); err != nil {
		return s.failed("put", st.ID, ctx, err)
	}
	return nil
}

// items builds st's head, followed by its parts when the body does not fit in the head, or
// says why it cannot be stored.
func (s *Store) items(st *responsestore.Stored) ([]item, error) {
	if st.Expires.IsZero() {
		return nil, fmt.Errorf("dynamostore: put %s: no expiry", st.ID)
	}
	pk := record.Key(st.Owner, st.ID)
	if len(pk) > maxKeyBytes {
		return nil, fmt.Errorf("dynamostore: put %s: id and owner make a key of %d bytes, more than the %d the store takes", st.ID, len(pk), maxKeyBytes)
	}
	body, err := record.Pack(st.Input, st.Response)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: put %s: %w", st.ID, err)
	}
	ttl := num(st.Expires.Unix())
	head := item{
		KeyPartition: str(pk),
		"owner":      str(st.Owner),
		"id":         str(st.ID),
		"created":    str(st.Created.UTC().Format(dynamotable.TimeLayout)),
		"expires":    str(st.Expires.UTC().Format(dynamotable.TimeLayout)),
		AttrTTL:      ttl,
		"body":       &types.AttributeValueMemberB{Value: body},
	}
	if st.Model != "" {
		head["model"] = str(st.Model)
	}
	if dynamotable.ItemSize(head) <= MaxItemBytes {
		return []item{head}, nil
	}
	delete(head, "body")
	gen := record.Generation()
	chunks := record.Split(body, partBytes)
	head["gen"], head["parts"] = str(gen), num(int64(len(chunks)))
	if len(body) > s.maxBody || dynamotable.ItemSize(head) > MaxItemBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes compressed, over the %d the store keeps", responsestore.ErrTooLarge, st.ID, len(body), s.maxBody)
	}
	items := []item{head}
	for i, c := range chunks {
		items = append(items, item{KeyPartition: str(record.PartKey(pk, gen, i)), "body": &types.AttributeValueMemberB{Value: c}, AttrTTL: ttl})
	}
	return items, nil
}

func (s *Store) Get(ctx context.Context, id, owner string) (*responsestore.Stored, error) {
	pk := record.Key(owner, id)
	if len(pk) > maxKeyBytes {
		return nil, responsestore.ErrNotFound // Put refuses such keys: none is stored
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyAt(pk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, s.failed("get", id, ctx, err)
	}
	if out.Item == nil {
		return nil, responsestore.ErrNotFound
	}
	st, h, err := decode(out.Item)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: get %s from table %s: %w", id, s.table, err)
	}
	if st.ID != id || st.Owner != owner || !s.now().Before(st.Expires) {
		return nil, responsestore.ErrNotFound
	}
	body := h.body
	if h.parts > 0 {
		if body, err = s.readParts(ctx, pk, h); err != nil {
			return nil, s.failed("get", id, ctx, err)
		}
		if body == nil {
			return nil, responsestore.ErrNotFound // deleted since the head was read
		}
	}
	if st.Input, st.Response, err = record.Unpack(body); err != nil {
		return nil, fmt.Errorf("dynamostore: get %s from table %s: %w", id, s.table, err)
	}
	return st, nil
}

// readParts reads a head's parts and joins them; nil when one is gone.
func (s *Store) readParts(ctx context.Context, pk string, h head) ([]byte, error) {
	chunks := make([][]byte, h.parts)
	gone := false
	err := record.Each(h.parts, concurrency, func(i int) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyAt(record.PartKey(pk, h.gen, i)), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if b, ok := out.Item["body"].(*types.AttributeValueMemberB); ok {
			chunks[i] = b.Value
		} else {
			gone = true // a write to gone races harmlessly: only true is ever written
		}
		return nil
	})
	if err != nil || gone {
		return nil, err
	}
	return bytes.Join(chunks, nil), nil
}

func (s *Store) Delete(ctx context.Context, id, owner string) error {
	pk := record.Key(owner, id)
	if len(pk) > maxKeyBytes {
		return responsestore.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// One conditional call: of concurrent deletes one succeeds, and an expired response
	// still in the table (TTL is late) is not there for the caller.
	out, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &s.table,
		Key:                       keyAt(pk),
		ConditionExpression:       aws.String("attribute_exists(pk) AND #expires > :now"),
		ExpressionAttributeNames:  map[string]string{"#expires": "expires"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": str(s.now().UTC().Format(dynamotable.TimeLayout))},
		ReturnValues:              types.ReturnValueAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return responsestore.ErrNotFound
	}
	if err != nil {
		return s.failed("delete", id, ctx, err)
	}
	// The response is gone with its head; its parts go now, or with TTL if this fails.
	if _, h, err := decode(out.Attributes); err == nil && h.parts > 0 {
		_ = record.Each(h.parts, concurrency, func(i int) error {
			_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: keyAt(record.PartKey(pk, h.gen, i))})
			return err
		})
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

// head is where a head item's body is: in it, or in parts of a generation.
type head struct {
	body  []byte
	gen   string
	parts int
}

func decode(it item) (*responsestore.Stored, head, error) {
	st := &responsestore.Stored{}
	var h head
	var err error
	text := func(name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	st.ID, st.Owner, st.Model, h.gen = text("id"), text("owner"), text("model"), text("gen")
	if st.Created, err = time.Parse(dynamotable.TimeLayout, text("created")); err != nil {
		return nil, h, fmt.Errorf("created: %w", err)
	}
	if st.Expires, err = time.Parse(dynamotable.TimeLayout, text("expires")); err != nil {
		return nil, h, fmt.Errorf("expires: %w", err)
	}
	if b, ok := it["body"].(*types.AttributeValueMemberB); ok {
		h.body = b.Value
	}
	if n, ok := it["parts"].(*types.AttributeValueMemberN); ok {
		if h.parts, err = strconv.Atoi(n.Value); err != nil || h.parts < 0 || h.parts > MaxBodyBytes/partBytes+1 {
			return nil, h, fmt.Errorf("parts: %q", n.Value)
		}
	}
	return st, h, nil
}

// CreateTable creates a table with the schema the store expects, waits until it is active
// and turns TTL on: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	if err := dynamotable.Create(ctx, db, table, dynamotable.Schema{Partition: KeyPartition, TTL: AttrTTL}); err != nil {
		return fmt.Errorf("dynamostore: %w", err)
	}
	return nil
}

var _ responsestore.Store = (*Store)(nil)

// Open returns a store on the table r names, through a client the platform's loader
// configures (region, credentials, AWS_ENDPOINT_URL), under r's timeout. The client
// contacts DynamoDB only at the first call.
func Open(ctx context.Context, load awsconf.Loader, r config.Responses) (*Store, error) {
	if r.Table == "" {
		return nil, errors.New("responses: store dynamodb needs a table (responses.table)")
	}
	awsCfg, err := load(ctx, awsconf.Options{})
	if err != nil {
		return nil, fmt.Errorf("responses: %w", err)
	}
	return New(dynamodb.NewFromConfig(awsCfg), r.Table, Options{Timeout: r.Timeout.D()}), nil
}
