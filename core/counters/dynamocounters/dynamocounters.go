// Package dynamocounters keeps gateway keys' counters in DynamoDB, for the AWS functions.
//
// Table: partition key pk (S) = the key's name, on-demand billing, TTL on expires_at.
// One item per key holds every counter of the key: its own and its per-model rules', each
// window's count an attribute of its own named by counters.Field ("r|29031234|"), plus the
// newest windows the item has seen (w_m, w_d, w_M) and expires_at, the end of its month.
//
// An admission is one UpdateItem: ADD to every counter, SET the windows, REMOVE the
// attributes of windows that have passed, under a condition that each limited counter is at
// most its maximum and that no window stored is newer than the caller's. DynamoDB applies a
// single-item conditional write atomically, so concurrent admissions from any number of
// instances never admit past a limit; keeping all of a key's counters in one item is what
// makes that one write, where an item per counter would need a transaction, and
// transactions on one hot key collide with each other (TransactionConflict) instead of
// queueing. One item takes about a thousand writes a second, far above any one key's rate.
//
// When the condition fails, the item as it was (ReturnValuesOnConditionCheckFailure) says
// why: a newer window (another instance's clock is ahead: charge that window, once more) or a
// limit (refuse, with the counts for the client's headers).
//
//	dynamocounters.go  the counters (counters.Store)
//	history.go         the usage history (counters.History): an item per key and UTC day
package dynamocounters

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/internal/dynamotable"
)

// Key and attribute names; the IaC declares the same.
const (
	KeyPartition = "pk"
	AttrTTL      = "expires_at"

	attrMinute = "w_m"
	attrDay    = "w_d"
	attrMonth  = "w_M"
)

// maxRemoved bounds the stale attributes one write removes, keeping the expression small;
// the next write removes the rest.
const maxRemoved = 32

// Store is a counters.Store on a DynamoDB table.
type Store struct {
	db    *dynamodb.Client
	table string

	mu    sync.Mutex
	stale map[string][]string         // key -> attributes of passed windows, seen in its last answer
	seen  map[string]counters.Windows // key -> the newest windows seen, so a clock behind starts there
}

// New returns a store on an existing table (see CreateTable for its schema).
func New(db *dynamodb.Client, table string) *Store {
	return &Store{db: db, table: table, stale: map[string][]string{}, seen: map[string]counters.Windows{}}
}

func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func keyOf(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{KeyPartition: &types.AttributeValueMemberS{Value: key}}
}

// merged folds amounts on one counter into one (DynamoDB refuses two actions on one path).
func merged(amounts []counters.Amount) []counters.Amount {
	out := make([]counters.Amount, 0, len(amounts))
	at := map[counters.Counter]int{}
	for _, a := range amounts {
		i, dup := at[a.Counter]
		if !dup {
			at[a.Counter] = len(out)
			out = append(out, a)
			continue
		}
		o := &out[i]
		o.N += a.N
		switch {
		case a.Limited && o.Limited:
			o.Max = min(o.Max, a.Max)
		case a.Limited:
			o.Max, o.Limited = a.Max, true
		}
	}
	return out
}

// expr builds one UpdateItem's expressions.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
	set    []string
	add    []string
	remove []string
	cond   []string
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

func (e *expr) name(attr string) string {
	p := "#a" + strconv.Itoa(len(e.names))
	e.names[p] = attr
	return p
}

func (e *expr) value(v types.AttributeValue) string {
	p := ":v" + strconv.Itoa(len(e.values))
	e.values[p] = v
	return p
}

// atMost adds the condition that attr is absent or holds at most v.
func (e *expr) atMost(attr string, v int64) {
	a := e.name(attr)
	e.cond = append(e.cond, "(attribute_not_exists("+a+") OR "+a+" <= "+e.value(n(v))+")")
}

func (e *expr) update() string {
	var b strings.Builder
	for _, part := range []struct {
		verb  string
		items []string
	}{{"SET", e.set}, {"ADD", e.add}, {"REMOVE", e.remove}} {
		if len(part.items) > 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(part.verb + " " + strings.Join(part.items, ", "))
		}
	}
	return b.String()
}

func (e *expr) input(table, key string) *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		TableName:                 &table,
		Key:                       keyOf(key),
		UpdateExpression:          aws.String(e.update()),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		ReturnValues:              types.ReturnValueAllNew,
	}
	if len(e.cond) > 0 {
		in.ConditionExpression = aws.String(strings.Join(e.cond, " AND "))
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	return in
}

// adds charges amounts in w and removes the key's stale attributes not charged here.
func (s *Store) adds(e *expr, key string, w counters.Windows, amounts []counters.Amount) {
	charged := map[string]bool{}
	for _, a := range amounts {
		f := counters.Field(a.Counter, w)
		charged[f] = true
		e.add = append(e.add, e.name(f)+" "+e.value(n(a.N)))
	}
	s.mu.Lock()
	stale := s.stale[key]
	s.mu.Unlock()
	for _, f := range stale {
		if !charged[f] && len(e.remove) < maxRemoved {
			e.remove = append(e.remove, e.name(f))
		}
	}
}

func (s *Store) Take(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) (counters.Counts, bool, error) {
	amounts = merged(amounts)
	s.mu.Lock()
	w = w.Later(s.seen[key])
	s.mu.Unlock()
	for range 4 {
		e := newExpr()
		for _, win := range []struct {
			attr string
			v    int64
		}{{attrMinute, w.Minute}, {attrDay, w.Day}, {attrMonth, w.Month}} {
			e.atMost(win.attr, win.v)
			e.set = append(e.set, e.name(win.attr)+" = "+e.value(n(win.v)))
		}
		e.set = append(e.set, e.name(AttrTTL)+" = "+e.value(n(w.Expires().Unix())))
		for _, a := range amounts {
			if a.Limited {
				e.atMost(counters.Field(a.Counter, w), a.Max)
			}
		}
		s.adds(e, key, w, amounts)
		out, err := s.db.UpdateItem(ctx, e.input(s.table, key))
		if err == nil {
			s.remember(key, out.Attributes, w)
			return counts(out.Attributes, w, amounts), true, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return counters.Counts{}, false, fmt.Errorf("dynamocounters: take %s: %w", key, err)
		}
		old := ccf.Item
		if old == nil { // a DynamoDB without ReturnValuesOnConditionCheckFailure
			if old, err = s.get(ctx, key); err != nil {
				return counters.Counts{}, false, err
			}
		}
		if stored := windowsOf(old); w.Behind(stored) {
			w = w.Later(stored)
			s.mu.Lock()
			s.seen[key] = w
			s.mu.Unlock()
			continue
		}
		s.remember(key, old, w)
		return counts(old, w, amounts), false, nil
	}
	return counters.Counts{}, false, fmt.Errorf("dynamocounters: take %s: the stored windows kept moving", key)
}

func (s *Store) Add(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) error {
	amounts = merged(amounts)
	if len(amounts) == 0 {
		return nil
	}
	e := newExpr()
	ttl := e.name(AttrTTL)
	e.set = append(e.set, ttl+" = if_not_exists("+ttl+", "+e.value(n(w.Expires().Unix()))+")")
	s.adds(e, key, w, amounts)
	out, err := s.db.UpdateItem(ctx, e.input(s.table, key))
	if err != nil {
		return fmt.Errorf("dynamocounters: add %s: %w", key, err)
	}
	s.remember(key, out.Attributes, w.Later(windowsOf(out.Attributes)))
	return nil
}

func (s *Store) Read(ctx context.Context, key string, w counters.Windows) (counters.Counts, error) {
	item, err := s.get(ctx, key)
	if err != nil {
		return counters.Counts{}, err
	}
	w = w.Later(windowsOf(item))
	c := counters.Counts{Windows: w, Values: map[counters.Counter]int64{}}
	counters.Collect(c.Values, fields(item), w)
	return c, nil
}

func (s *Store) get(ctx context.Context, key string) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keyOf(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamocounters: read %s: %w", key, err)
	}
	return out.Item, nil
}

// remember notes what an answer showed: the newest windows, and the attributes of windows that
// have passed, for the key's next write to remove.
func (s *Store) remember(key string, item map[string]types.AttributeValue, w counters.Windows) {
	var stale []string
	for name := range item {
		if _, old := counters.Current(name, w); old {
			stale = append(stale, name)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[key] = s.seen[key].Later(windowsOf(item)).Later(w)
	if len(stale) == 0 {
		delete(s.stale, key)
	} else {
		s.stale[key] = stale
	}
}

func number(v types.AttributeValue) (int64, bool) {
	nv, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(nv.Value, 10, 64)
	return i, err == nil
}

func windowsOf(item map[string]types.AttributeValue) counters.Windows {
	var w counters.Windows
	w.Minute, _ = number(item[attrMinute])
	w.Day, _ = number(item[attrDay])
	w.Month, _ = number(item[attrMonth])
	return w
}

func fields(item map[string]types.AttributeValue) map[string]int64 {
	out := make(map[string]int64, len(item))
	for name, v := range item {
		if i, ok := number(v); ok {
			out[name] = i
		}
	}
	return out
}

func counts(item map[string]types.AttributeValue, w counters.Windows, amounts []counters.Amount) counters.Counts {
	c := counters.Counts{Windows: w, Values: make(map[counters.Counter]int64, len(amounts))}
	for _, a := range amounts {
		c.Values[a.Counter], _ = number(item[counters.Field(a.Counter, w)])
	}
	return c
}

// CreateTable creates a table with the schema the store expects and waits until it is
// active: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	if err := dynamotable.Create(ctx, db, table, dynamotable.Schema{Partition: KeyPartition, TTL: AttrTTL}); err != nil {
		return fmt.Errorf("dynamocounters: %w", err)
	}
	return nil
}

var _ counters.Store = (*Store)(nil)

// Open returns a store on the table c names, with the region c names (else the loader's) and
// c.Endpoint, when set, as the endpoint (tests; DynamoDB Local). The SDK may try a call twice
// within the counters' timeout: a throttled write is worth one more try, not three.
func Open(ctx context.Context, load awsconf.Loader, c config.Counters) (*Store, error) {
	if c.Table == "" {
		return nil, errors.New("counters: store dynamodb needs a table (counters.table)")
	}
	awsCfg, err := load(ctx, awsconf.Options{Region: c.Region})
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.RetryMaxAttempts = 2
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
	})
	return New(db, c.Table), nil
}
