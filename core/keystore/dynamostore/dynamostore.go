// Package dynamostore keeps the stored keys and the admin audit log in one DynamoDB table,
// for the Lambda functions (and a local server that names it).
//
// Table (the IaC declares the same; CreateTable makes it for tests): on-demand billing,
// partition key pk (S), sort key sk (S), no TTL (tombstones and entries are kept for good),
// and two global secondary indexes, both projecting ALL:
//
//	changes       partition chg_b (S), sort chg_t (S): the keys by the hour of their last update
//	audit_target  partition target (S), sort sk (S): one key's (or route's) audit entries
//
// Items:
//
//	key     pk "keys", sk the key's id; doc (the key as keystore.EncodeKey writes it), ver
//	        (N, its Version), name, team, del (BOOL), chg_b (the UTC hour of Updated,
//	        "2006-01-02T15"), chg_t (Updated in zero-padded Unix nanoseconds, "#", the id)
//	hash    pk "hash#<sha256 hex>", sk "hash", id: the claim of a live key's secret
//	name    pk "name#<name>", sk "name", id: the claim of a live key's name
//	audit   pk "audit", sk "<zero-padded Unix ns>#<entry id>", target (when the entry has
//	        one), doc (the entry as JSON)
//
// Every change is one TransactWriteItems: the key item under the condition that its version
// is the one read, the claims it takes (put where none is) and frees (deleted), and its
// audit entry; DynamoDB applies all of it or none, so two admins racing on one key or one
// name leave one winner and no half-written change. A transaction that collides with another
// on the same items (TransactionConflict) is tried again, and then finds the other's result.
//
// Keys share the partition "keys" and entries the partition "audit": admin writes come at
// human rates, far below a partition's thousand writes a second, and a key list is read
// whole by one Query in id order. The gateway reads the hash claim and the key (GetItem,
// strongly consistent) for a secret it has not seen, and Queries the changes index every
// few seconds for the hours since its last read; a read further back than maxBuckets hours
// queries the keys partition instead. The index is eventually consistent (well under a
// second); the gateway's reads overlap by more than that.
//
// IAM: the gateway needs dynamodb:GetItem and dynamodb:Query on the table and its indexes;
// the control plane those and PutItem, UpdateItem, DeleteItem and ConditionCheckItem (by
// which DynamoDB authorizes each item of a transaction).
package dynamostore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// Attribute and index names; the IaC declares the same.
const (
	KeyPartition     = "pk"
	KeySort          = "sk"
	AttrChangeBucket = "chg_b"
	AttrChangeTime   = "chg_t"
	AttrTarget       = "target"
	IndexChanges     = "changes"
	IndexAuditTarget = "audit_target"

	keysPartition  = "keys"
	auditPartition = "audit"
	hashSort       = "hash"
	nameSort       = "name"
	bucketLayout   = "2006-01-02T15"
)

// maxBuckets bounds the hours one Changed reads through the index; a since further back
// reads the keys partition whole (a cache starting over, not the gateway's every read).
const maxBuckets = 48

// maxTries bounds the tries of one change whose transaction collides with another's.
const maxTries = 5

// Store is a keystore.Store on a DynamoDB table.
type Store struct {
	db      *dynamodb.Client
	table   string
	timeout time.Duration
	now     func() time.Time
}

// Options tune a store.
type Options struct {
	// Timeout bounds each call (config.DefaultStoreTimeout when 0).
	Timeout time.Duration
}

// New returns a store on an existing table (see CreateTable for its schema).
func New(db *dynamodb.Client, table string, o Options) *Store {
	if o.Timeout <= 0 {
		o.Timeout = config.DefaultStoreTimeout
	}
	return &Store{db: db, table: table, timeout: o.Timeout, now: time.Now}
}

// Open returns a store on the table ks names, through a client the platform's loader
// configures (credentials, AWS_ENDPOINT_URL), in ks.Region when set and at ks.Endpoint when
// set, under ks's timeout. The client contacts DynamoDB only at the first call.
func Open(ctx context.Context, load awsconf.Loader, ks config.KeyStore) (*Store, error) {
	if ks.Table == "" {
		return nil, errors.New("key_store: store dynamodb needs a table (key_store.table)")
	}
	awsCfg, err := load(ctx, awsconf.Options{Region: ks.Region})
	if err != nil {
		return nil, fmt.Errorf("key_store: %w", err)
	}
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if ks.Endpoint != "" {
			o.BaseEndpoint = aws.String(ks.Endpoint)
		}
	})
	return New(db, ks.Table, Options{Timeout: ks.Timeout.D()}), nil
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{KeyPartition: s(pk), KeySort: s(sk)}
}

func hashPK(h [32]byte) string  { return "hash#" + hex.EncodeToString(h[:]) }
func namePK(name string) string { return "name#" + name }

// stamp is a time as a fixed-width string, so times compare as strings do; times before
// 1970 (the zero time) are all "0".
func stamp(t time.Time) string {
	if t.Before(time.Unix(0, 0)) {
		return "0"
	}
	return fmt.Sprintf("%020d", t.UnixNano())
}

func bucket(t time.Time) string { return t.UTC().Format(bucketLayout) }

func (st *Store) keyItem(k *keystore.Key) (map[string]types.AttributeValue, error) {
	doc, err := keystore.EncodeKey(k)
	if err != nil {
		return nil, err
	}
	it := itemKey(keysPartition, k.ID)
	it["doc"], it["ver"], it["name"], it["team"] = s(string(doc)), n(k.Version), s(k.Name), s(k.Team)
	it["del"] = &types.AttributeValueMemberBOOL{Value: k.Deleted}
	it[AttrChangeBucket], it[AttrChangeTime] = s(bucket(k.Updated)), s(stamp(k.Updated)+"#"+k.ID)
	return it, nil
}

func claim(pk, sort, id string) map[string]types.AttributeValue {
	it := itemKey(pk, sort)
	it["id"] = s(id)
	return it
}

func (st *Store) auditPut(e *keystore.Entry) (*types.TransactWriteItem, error) {
	doc, err := keystore.EncodeEntry(e)
	if err != nil {
		return nil, err
	}
	it := itemKey(auditPartition, stamp(e.Time)+"#"+e.ID)
	it["doc"] = s(string(doc))
	if e.Target != "" { // an index's key may not be empty
		it[AttrTarget] = s(e.Target)
	}
	return st.putNew(it), nil
}

// putNew puts an item where none is.
func (st *Store) putNew(it map[string]types.AttributeValue) *types.TransactWriteItem {
	return &types.TransactWriteItem{Put: &types.Put{
		TableName: &st.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}
}

// freeClaim deletes a claim the key holds.
func (st *Store) freeClaim(pk, sort, id string) *types.TransactWriteItem {
	return &types.TransactWriteItem{Delete: &types.Delete{
		TableName: &st.table, Key: itemKey(pk, sort),
		ConditionExpression:       aws.String("id = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": s(id)},
	}}
}

// write runs a transaction whose items' failed conditions mean the errors in fail (nil: the
// store's own inconsistency, reported as ErrConflict), trying again when it collided with
// another transaction.
func (st *Store) write(ctx context.Context, items []types.TransactWriteItem, fail []error) error {
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	for try := 1; ; try++ {
		_, err := st.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		var tc *types.TransactionCanceledException
		if err == nil || !errors.As(err, &tc) {
			if err != nil {
				return fmt.Errorf("keystore: dynamodb: %w", err)
			}
			return nil
		}
		conflict := false
		for i, r := range tc.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				if i < len(fail) && fail[i] != nil {
					return fail[i]
				}
				return keystore.ErrConflict
			case "TransactionConflict":
				conflict = true
			}
		}
		if !conflict || try == maxTries {
			return fmt.Errorf("keystore: dynamodb: %w", err)
		}
		// Another change on these items is in flight: wait for it, a little at random so
		// that racing writers do not collide again in step.
		select {
		case <-time.After(time.Duration(try*10+rand.IntN(20)) * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("keystore: dynamodb: %w", ctx.Err())
		}
	}
}

func (st *Store) Create(ctx context.Context, k *keystore.Key, e *keystore.Entry) error {
	c := k.Clone()
	c.Version = 1
	it, err := st.keyItem(c)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{*st.putNew(it), *st.putNew(claim(hashPK(c.Hash), hashSort, c.ID)), *st.putNew(claim(namePK(c.Name), nameSort, c.ID))}
	fail := []error{keystore.ErrExists, keystore.ErrExists, keystore.ErrNameTaken}
	if e != nil {
		a, err := st.auditPut(e)
		if err != nil {
			return err
		}
		items, fail = append(items, *a), append(fail, keystore.ErrExists)
	}
	return st.write(ctx, items, fail)
}

func (st *Store) Update(ctx context.Context, k *keystore.Key, e *keystore.Entry) error {
	old, err := st.Get(ctx, k.ID)
	if err != nil {
		return err
	}
	if old.Deleted || old.Version != k.Version-1 {
		return keystore.ErrConflict
	}
	c := k.Clone()
	it, err := st.keyItem(c)
	if err != nil {
		return err
	}
	// The version read is still the key's, so its claims are the ones read.
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: &st.table, Item: it,
		ConditionExpression:       aws.String("ver = :old AND del = :false"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":old": n(old.Version), ":false": &types.AttributeValueMemberBOOL{Value: false}},
	}}}
	fail := []error{keystore.ErrConflict}
	if c.Deleted || c.Hash != old.Hash {
		items, fail = append(items, *st.freeClaim(hashPK(old.Hash), hashSort, c.ID)), append(fail, nil)
	}
	if !c.Deleted && c.Hash != old.Hash {
		items, fail = append(items, *st.putNew(claim(hashPK(c.Hash), hashSort, c.ID))), append(fail, keystore.ErrExists)
	}
	if c.Deleted || c.Name != old.Name {
		items, fail = append(items, *st.freeClaim(namePK(old.Name), nameSort, c.ID)), append(fail, nil)
	}
	if !c.Deleted && c.Name != old.Name {
		items, fail = append(items, *st.putNew(claim(namePK(c.Name), nameSort, c.ID))), append(fail, keystore.ErrNameTaken)
	}
	if e != nil {
		a, err := st.auditPut(e)
		if err != nil {
			return err
		}
		items, fail = append(items, *a), append(fail, keystore.ErrExists)
	}
	return st.write(ctx, items, fail)
}

func (st *Store) get(ctx context.Context, pk, sort string) (map[string]types.AttributeValue, error) {
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.table, Key: itemKey(pk, sort), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("keystore: dynamodb: %w", err)
	}
	if len(out.Item) == 0 {
		return nil, keystore.ErrNotFound
	}
	return out.Item, nil
}

func str(it map[string]types.AttributeValue, attr string) string {
	if v, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func decodeKey(it map[string]types.AttributeValue) (*keystore.Key, error) {
	return keystore.DecodeKey([]byte(str(it, "doc")))
}

func (st *Store) Get(ctx context.Context, id string) (*keystore.Key, error) {
	if id == "" {
		return nil, keystore.ErrNotFound
	}
	it, err := st.get(ctx, keysPartition, id)
	if err != nil {
		return nil, err
	}
	return decodeKey(it)
}

func (st *Store) ByHash(ctx context.Context, hash [32]byte) (*keystore.Key, error) {
	c, err := st.get(ctx, hashPK(hash), hashSort)
	if err != nil {
		return nil, err
	}
	k, err := st.Get(ctx, str(c, "id"))
	if err != nil {
		return nil, err
	}
	// Between the two reads the key may have been rotated or deleted.
	if k.Deleted || k.Hash != hash {
		return nil, keystore.ErrNotFound
	}
	return k, nil
}

// query runs q page by page, handing each item to keep until keep says it has enough.
func (st *Store) query(ctx context.Context, q *dynamodb.QueryInput, keep func(map[string]types.AttributeValue) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	q.TableName = &st.table
	for {
		out, err := st.db.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("keystore: dynamodb: %w", err)
		}
		for _, it := range out.Items {
			if done, err := keep(it); done || err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		q.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func (st *Store) List(ctx context.Context, q keystore.Query) (*keystore.KeyPage, error) {
	limit := keystore.PageLimit(q.Limit)
	in := &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(keysPartition)},
		ExpressionAttributeNames:  map[string]string{},
		ConsistentRead:            aws.Bool(true),
	}
	if q.After != "" {
		in.KeyConditionExpression = aws.String("pk = :pk AND sk > :after")
		in.ExpressionAttributeValues[":after"] = s(q.After)
	}
	var filter []string
	if q.Team != "" {
		filter = append(filter, "team = :team")
		in.ExpressionAttributeValues[":team"] = s(q.Team)
	}
	if q.Name != "" {
		filter = append(filter, "#name = :name")
		in.ExpressionAttributeNames["#name"] = "name"
		in.ExpressionAttributeValues[":name"] = s(q.Name)
	}
	if !q.Deleted {
		filter = append(filter, "del = :false")
		in.ExpressionAttributeValues[":false"] = &types.AttributeValueMemberBOOL{Value: false}
	}
	if len(filter) > 0 {
		in.FilterExpression = aws.String(strings.Join(filter, " AND "))
	}
	if len(in.ExpressionAttributeNames) == 0 {
		in.ExpressionAttributeNames = nil
	}
	page := &keystore.KeyPage{}
	err := st.query(ctx, in, func(it map[string]types.AttributeValue) (bool, error) {
		if len(page.Keys) == limit {
			page.Next = page.Keys[limit-1].ID
			return true, nil
		}
		k, err := decodeKey(it)
		page.Keys = append(page.Keys, k)
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

func (st *Store) Changed(ctx context.Context, since time.Time) ([]*keystore.Key, bool, error) {
	var out []*keystore.Key
	add := func(it map[string]types.AttributeValue) (bool, error) {
		k, err := decodeKey(it)
		out = append(out, k)
		return len(out) > keystore.MaxChanges, err
	}
	now := st.now()
	from := since.UTC().Truncate(time.Hour)
	last := now.UTC().Add(time.Hour).Truncate(time.Hour) // writers' clocks a little ahead
	if since.After(now) {
		last = since.UTC().Add(time.Hour).Truncate(time.Hour)
	}
	if last.Sub(from) > maxBuckets*time.Hour {
		// Further back than the index is read for: every key, in id order, then by time.
		err := st.query(ctx, &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("pk = :pk"),
			FilterExpression:          aws.String("chg_t >= :since"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(keysPartition), ":since": s(stamp(since))},
			ConsistentRead:            aws.Bool(true),
		}, func(it map[string]types.AttributeValue) (bool, error) {
			k, err := decodeKey(it)
			out = append(out, k)
			return false, err
		})
		if err != nil {
			return nil, false, err
		}
		slices.SortFunc(out, func(a, b *keystore.Key) int {
			if c := a.Updated.Compare(b.Updated); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	} else {
		for h := from; !h.After(last) && len(out) <= keystore.MaxChanges; h = h.Add(time.Hour) {
			err := st.query(ctx, &dynamodb.QueryInput{
				IndexName:                 aws.String(IndexChanges),
				KeyConditionExpression:    aws.String("chg_b = :b AND chg_t >= :since"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":b": s(bucket(h)), ":since": s(stamp(since))},
				Limit:                     aws.Int32(int32(keystore.MaxChanges + 1 - len(out))),
			}, add)
			if err != nil {
				return nil, false, err
			}
		}
	}
	if len(out) > keystore.MaxChanges {
		return out[:keystore.MaxChanges], true, nil
	}
	return out, false, nil
}

func (st *Store) Audit(ctx context.Context, q keystore.AuditQuery) (*keystore.AuditPage, error) {
	limit := keystore.PageLimit(q.Limit)
	lo, hi := "0", "1" // every sort key is 20 digits from 0
	if !q.Since.IsZero() {
		lo = stamp(q.Since)
	}
	if !q.Until.IsZero() {
		hi = stamp(q.Until) // never a sort key itself, so BETWEEN leaves Until out
	}
	if q.After != "" && q.After < hi {
		hi = q.After // a sort key: skipped below
	}
	in := &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :p AND sk BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(auditPartition), ":lo": s(lo), ":hi": s(hi)},
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(limit + 2)),
	}
	if q.Target != "" {
		in.IndexName, in.ConsistentRead = aws.String(IndexAuditTarget), nil
		in.KeyConditionExpression = aws.String("#t = :p AND sk BETWEEN :lo AND :hi")
		in.ExpressionAttributeNames = map[string]string{"#t": AttrTarget}
		in.ExpressionAttributeValues[":p"] = s(q.Target)
	}
	page := &keystore.AuditPage{}
	var cursors []string
	if lo > hi {
		return page, nil
	}
	err := st.query(ctx, in, func(it map[string]types.AttributeValue) (bool, error) {
		sk := str(it, KeySort)
		if sk == q.After {
			return false, nil
		}
		if len(page.Entries) == limit {
			page.Next = cursors[limit-1]
			return true, nil
		}
		e, err := keystore.DecodeEntry([]byte(str(it, "doc")))
		page.Entries, cursors = append(page.Entries, e), append(cursors, sk)
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// CreateTable creates a table with the schema and indexes the store expects and waits until
// it is active: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	str := func(name string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
	}
	keys := func(hash, rng string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(rng), KeyType: types.KeyTypeRange}}
	}
	all := &types.Projection{ProjectionType: types.ProjectionTypeAll}
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{str(KeyPartition), str(KeySort), str(AttrChangeBucket), str(AttrChangeTime), str(AttrTarget)},
		KeySchema:            keys(KeyPartition, KeySort),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String(IndexChanges), KeySchema: keys(AttrChangeBucket, AttrChangeTime), Projection: all},
			{IndexName: aws.String(IndexAuditTarget), KeySchema: keys(AttrTarget, KeySort), Projection: all},
		},
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
	return nil
}

var _ keystore.Store = (*Store)(nil)
