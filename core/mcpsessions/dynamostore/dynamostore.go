// Package dynamostore keeps MCP sessions in a DynamoDB table, for the Lambda function (and a
// local server that names it): any instance continues a session another one opened.
//
// Table: partition key id (S), on-demand billing, TTL on expires_at (see CreateTable; the
// IaC declares the same). A session is one item:
//
//	id          the session id (the Mcp-Session-Id)
//	owner       the caller that opened it
//	state       the gateway's record of the session (B; absent when empty)
//	expires     RFC 3339 in UTC with nine fractional digits
//	expires_at  expires in Unix seconds, for DynamoDB's TTL, which deletes up to days late:
//	            reads compare expires with the store's clock themselves
//
// Reads are strongly consistent: a client's next message may reach another instance
// milliseconds after the Put. Each Put, Get and Delete runs under the store's timeout.
// IAM: dynamodb:GetItem, PutItem and DeleteItem on the table, nothing else.
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

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/dynamotable"
	"github.com/fngate/fngate/core/mcpsessions"
)

// Key and attribute names; the IaC declares the same.
const (
	KeyPartition = "id"
	AttrTTL      = "expires_at"
)

// maxIDBytes is DynamoDB's limit on a partition key.
const maxIDBytes = 2048

// API is the part of the DynamoDB client the store calls; *dynamodb.Client has it.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means config.DefaultStoreTimeout.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is a mcpsessions.Store on a DynamoDB table.
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
		s.timeout = config.DefaultStoreTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func keyAt(id string) item { return item{KeyPartition: str(id)} }

// valid says whether DynamoDB takes id as a key: Put refuses the others, so none is stored.
func valid(id string) bool { return id != "" && len(id) <= maxIDBytes }

func (s *Store) Put(ctx context.Context, sess mcpsessions.Session) error {
	if !valid(sess.ID) {
		return fmt.Errorf("dynamostore: put: a session id of %d bytes; the store takes 1 to %d", len(sess.ID), maxIDBytes)
	}
	if sess.Expires.IsZero() {
		return fmt.Errorf("dynamostore: put %s: no expiry", sess.ID)
	}
	it := item{
		KeyPartition: str(sess.ID),
		"owner":      str(sess.Owner),
		"expires":    str(sess.Expires.UTC().Format(dynamotable.TimeLayout)),
		AttrTTL:      &types.AttributeValueMemberN{Value: strconv.FormatInt(sess.Expires.Unix(), 10)},
	}
	if len(sess.State) > 0 {
		it["state"] = &types.AttributeValueMemberB{Value: sess.State}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it}); err != nil {
		return s.failed("put", sess.ID, ctx, err)
	}
	return nil
}

func (s *Store) Get(ctx context.Context, id string) (mcpsessions.Session, error) {
	if !valid(id) {
		return mcpsessions.Session{}, mcpsessions.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyAt(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return mcpsessions.Session{}, s.failed("get", id, ctx, err)
	}
	if out.Item == nil {
		return mcpsessions.Session{}, mcpsessions.ErrNotFound
	}
	sess, err := decode(out.Item)
	if err != nil {
		return mcpsessions.Session{}, fmt.Errorf("dynamostore: get %s from table %s: %w", id, s.table, err)
	}
	if sess.ID != id || !s.now().Before(sess.Expires) {
		return mcpsessions.Session{}, mcpsessions.ErrNotFound
	}
	return sess, nil
}

func (s *Store) Delete(ctx context.Context, id string) error {
	if !valid(id) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: keyAt(id)}); err != nil {
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

func decode(it item) (mcpsessions.Session, error) {
	var sess mcpsessions.Session
	text := func(name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	sess.ID, sess.Owner = text(KeyPartition), text("owner")
	var err error
	if sess.Expires, err = time.Parse(dynamotable.TimeLayout, text("expires")); err != nil {
		return sess, fmt.Errorf("expires: %w", err)
	}
	if b, ok := it["state"].(*types.AttributeValueMemberB); ok {
		sess.State = b.Value
	}
	return sess, nil
}

// CreateTable creates a table with the schema the store expects, waits until it is active
// and turns TTL on: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	if err := dynamotable.Create(ctx, db, table, dynamotable.Schema{Partition: KeyPartition, TTL: AttrTTL}); err != nil {
		return fmt.Errorf("dynamostore: %w", err)
	}
	return nil
}

var _ mcpsessions.Store = (*Store)(nil)

// Open returns a store on the table c names, through a client the platform's loader
// configures (region, credentials, AWS_ENDPOINT_URL), under c's timeout. The client
// contacts DynamoDB only at the first call.
func Open(ctx context.Context, load awsconf.Loader, c config.MCPSessions) (*Store, error) {
	if c.Table == "" {
		return nil, errors.New("mcp_sessions: store dynamodb needs a table (mcp_sessions.table)")
	}
	awsCfg, err := load(ctx, awsconf.Options{})
	if err != nil {
		return nil, fmt.Errorf("mcp_sessions: %w", err)
	}
	return New(dynamodb.NewFromConfig(awsCfg), c.Table, Options{Timeout: c.Timeout.D()}), nil
}
