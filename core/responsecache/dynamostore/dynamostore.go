// Package dynamostore keeps the response cache in a DynamoDB table, for the Lambda function
// (and a local server that names it).
//
// Table: partition key pk (S), on-demand billing, TTL on expires_at (see CreateTable; the
// IaC declares the same). An entry is one item:
//
//	pk          the entry's key (responsecache.Identity.Key)
//	model       the gateway model, for an operator reading the table
//	created     RFC 3339 in UTC with nine fractional digits (dynamotable.TimeLayout)
//	expires
//	expires_at  expires in Unix seconds, for DynamoDB's TTL, which deletes up to days
//	            late: a read compares expires with the store's clock itself
//	body        the recorded answer: as it is when the item fits in MaxItemBytes (counted as
//	gz          dynamotable.ItemSize counts), else gzip-compressed, and gz says which; no
//	            body is an empty one
//
// A body that does not fit compressed either is refused with ErrTooLarge before any call:
// the gateway then serves the answer uncached. Put replaces the whole item, so nothing of
// an entry's earlier body stays with the next.
//
// Reads are eventually consistent, at half the cost of strong ones: an entry written a
// moment ago that a read does not see yet is a miss, which only costs an upstream call.
// Each Get and Put runs under the store's timeout (config.DefaultCacheTimeout unless told):
// the lookup sits before every miss's upstream call. IAM: GetItem and PutItem on the table,
// nothing else.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/dynamotable"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/internal/pack"
)

// Key and attribute names; the IaC declares the same.
const (
	KeyPartition = "pk"
	AttrTTL      = "expires_at"
)

// MaxItemBytes is the largest item the store writes (see dynamotable.MaxItemBytes).
const MaxItemBytes = dynamotable.MaxItemBytes

// API is the part of the DynamoDB client the store calls; *dynamodb.Client has it.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means config.DefaultCacheTimeout, the
	// response_cache.timeout a config leaves unset.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is a responsecache.Store on a DynamoDB table.
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
		s.timeout = config.DefaultCacheTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func (s *Store) Put(ctx context.Context, e *responsecache.Entry) error {
	it, err := s.item(e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it}); err != nil {
		return s.failed("put", e.Key, ctx, err)
	}
	return nil
}

// item builds e's item, or says why it cannot be stored.
func (s *Store) item(e *responsecache.Entry) (item, error) {
	if !responsecache.ValidKey(e.Key) {
		return nil, fmt.Errorf("dynamostore: put: %.40q is not an entry key", e.Key)
	}
	it := item{
		KeyPartition: str(e.Key),
		"created":    str(e.Created.UTC().Format(dynamotable.TimeLayout)),
		"expires":    str(e.Expires.UTC().Format(dynamotable.TimeLayout)),
		AttrTTL:      &types.AttributeValueMemberN{Value: strconv.FormatInt(e.Expires.Unix(), 10)},
	}
	if e.Model != "" {
		it["model"] = str(e.Model)
	}
	withBody := func(body []byte, gz bool) {
		it["body"], it["gz"] = &types.AttributeValueMemberB{Value: body}, &types.AttributeValueMemberBOOL{Value: gz}
		if len(body) == 0 {
			delete(it, "body") // moto fails an empty binary value (a 500), which DynamoDB takes
		}
	}
	body, gz, err := pack.Fit(e.Body, func(body []byte, gz bool) bool {
		withBody(body, gz)
		return dynamotable.ItemSize(it) <= MaxItemBytes
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: put %s: %w", e.Key, err)
	}
	withBody(body, gz)
	return it, nil
}

func (s *Store) Get(ctx context.Context, key string) (*responsecache.Entry, error) {
	if !responsecache.ValidKey(key) {
		return nil, responsecache.ErrNotFound // Put refuses such keys: none is stored
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: item{KeyPartition: str(key)}})
	if err != nil {
		return nil, s.failed("get", key, ctx, err)
	}
	if out.Item == nil {
		return nil, responsecache.ErrNotFound
	}
	e, err := s.decode(out.Item)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: get %s from table %s: %w", key, s.table, err)
	}
	if e == nil || e.Key != key {
		return nil, responsecache.ErrNotFound
	}
	return e, nil
}

// decode reads an item; nil when it has expired, whose body it does not inflate.
func (s *Store) decode(it item) (*responsecache.Entry, error) {
	text := func(name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	e := &responsecache.Entry{Key: text(KeyPartition), Model: text("model")}
	var err error
	if e.Created, err = time.Parse(dynamotable.TimeLayout, text("created")); err != nil {
		return nil, fmt.Errorf("created: %w", err)
	}
	if e.Expires, err = time.Parse(dynamotable.TimeLayout, text("expires")); err != nil {
		return nil, fmt.Errorf("expires: %w", err)
	}
	if !s.now().Before(e.Expires) {
		return nil, nil
	}
	var body []byte // none: an empty body
	if b, ok := it["body"].(*types.AttributeValueMemberB); ok {
		body = b.Value
	}
	gz, _ := it["gz"].(*types.AttributeValueMemberBOOL)
	if e.Body, err = pack.Read(body, gz != nil && gz.Value); err != nil {
		return nil, err
	}
	return e, nil
}

// failed says which call failed on which table, and that it timed out when it did.
func (s *Store) failed(op, key string, ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("dynamostore: %s %s: table %s did not answer within %v: %w", op, key, s.table, s.timeout, err)
	}
	return fmt.Errorf("dynamostore: %s %s on table %s: %w", op, key, s.table, err)
}

// CreateTable creates a table with the schema the store expects, waits until it is active
// and turns TTL on: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	if err := dynamotable.Create(ctx, db, table, dynamotable.Schema{Partition: KeyPartition, TTL: AttrTTL}); err != nil {
		return fmt.Errorf("dynamostore: %w", err)
	}
	return nil
}

var _ responsecache.Store = (*Store)(nil)

// Open returns a store on the table c names, through a client the platform's loader
// configures (region, credentials, AWS_ENDPOINT_URL), under c's timeout. The client
// contacts DynamoDB only at the first call.
func Open(ctx context.Context, load awsconf.Loader, c config.ResponseCache) (*Store, error) {
	if c.Table == "" {
		return nil, errors.New("response_cache: store dynamodb needs a table (response_cache.table)")
	}
	awsCfg, err := load(ctx, awsconf.Options{})
	if err != nil {
		return nil, fmt.Errorf("response_cache: %w", err)
	}
	return New(dynamodb.NewFromConfig(awsCfg), c.Table, Options{Timeout: c.Timeout.D()}), nil
}
