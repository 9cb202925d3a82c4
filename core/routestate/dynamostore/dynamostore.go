// Package dynamostore keeps route state in one DynamoDB table, for the AWS functions.
//
// Table: partition key pk (S), sort key sk (S), on-demand billing, TTL on expires_at.
// Items:
//
//	pk="route"          sk=<route id>    the route's State
//	pk="window"         sk=<route id>    the route's burst window
//	pk="action"         sk=<action id>   the snapshot of one applied action
//	pk="claim#<id>"     sk="claim"       a claimed delivery id, with expires_at for TTL
//	pk="incident"       sk=<incident id> a provider incident (AWS Health, Service Health)
//
// Routes and actions each share one partition so the gateway's refresh and the operator's
// listing are single Queries, never Scans over the (many) claims.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/internal/dynamotable"
	"github.com/fngate/fngate/core/routestate"
)

// Key and attribute names; the IaC declares the same.
const (
	KeyPartition = "pk"
	KeySort      = "sk"
	AttrTTL      = "expires_at"

	pkRoute    = "route"
	pkWindow   = "window"
	pkAction   = "action"
	pkIncident = "incident"
	skClaim    = "claim"
)

// Store is a routestate.Store on a DynamoDB table.
type Store struct {
	db    *dynamodb.Client
	table string
}

// New returns a store on an existing table (see CreateTable for its schema).
func New(db *dynamodb.Client, table string) *Store { return &Store{db: db, table: table} }

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		KeyPartition: &types.AttributeValueMemberS{Value: pk},
		KeySort:      &types.AttributeValueMemberS{Value: sk},
	}
}

func marshal(v any, pk, sk string) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMapWithOptions(v, func(o *attributevalue.EncoderOptions) { o.OmitEmptyTime = true })
	if err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	item[KeyPartition] = &types.AttributeValueMemberS{Value: pk}
	item[KeySort] = &types.AttributeValueMemberS{Value: sk}
	return item, nil
}

func unmarshal(item map[string]types.AttributeValue, out any) error {
	if err := attributevalue.UnmarshalMap(item, out); err != nil {
		return fmt.Errorf("dynamostore: %w", err)
	}
	return nil
}

// versionCondition accepts the write only over the version the caller read.
func versionCondition(version int64) (*string, map[string]string, map[string]types.AttributeValue) {
	if version == 0 {
		return aws.String("attribute_not_exists(pk)"), nil, nil
	}
	return aws.String("#v = :v"), map[string]string{"#v": "version"},
		map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(version, 10)}}
}

func (s *Store) get(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &s.table,
		Key:            key(pk, sk),
		ConsistentRead: aws.Bool(true), // the caller's next write is conditional on what it reads
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: get %s/%s: %w", pk, sk, err)
	}
	return out.Item, nil
}

// query reads a partition in sort-key order, every page, up to limit items (0: all).
func (s *Store) query(ctx context.Context, pk string, forward bool, limit int) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ScanIndexForward:          aws.Bool(forward),
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("dynamostore: query %s: %w", pk, err)
		}
		items = append(items, page.Items...)
		if limit > 0 && len(items) >= limit {
			return items[:limit], nil
		}
	}
	return items, nil
}

func (s *Store) List(ctx context.Context) ([]routestate.State, error) {
	items, err := s.query(ctx, pkRoute, true, 0)
	if err != nil {
		return nil, err
	}
	out := make([]routestate.State, 0, len(items))
	for _, it := range items {
		var st routestate.State
		if err := unmarshal(it, &st); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *Store) Get(ctx context.Context, route string) (routestate.State, error) {
	item, err := s.get(ctx, pkRoute, route)
	if err != nil || item == nil {
		return routestate.State{Route: route, Status: routestate.Active}, err
	}
	var st routestate.State
	return st, unmarshal(item, &st)
}

func (s *Store) Put(ctx context.Context, next routestate.State, snap *routestate.Snapshot) (routestate.State, error) {
	cond, names, values := versionCondition(next.Version)
	stored := next
	stored.Version++
	item, err := marshal(stored, pkRoute, stored.Route)
	if err != nil {
		return routestate.State{}, err
	}
	if snap == nil {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &s.table, Item: item,
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		})
		if err != nil {
			return routestate.State{}, writeError("put "+next.Route, err)
		}
		return stored, nil
	}
	withAfter := *snap
	withAfter.After = stored
	snapItem, err := marshal(withAfter, pkAction, snap.ActionID)
	if err != nil {
		return routestate.State{}, err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.table, Item: item,
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}},
		{Put: &types.Put{TableName: &s.table, Item: snapItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	if err != nil {
		return routestate.State{}, writeError("put "+next.Route+" with snapshot "+snap.ActionID, err)
	}
	snap.After = stored
	return stored, nil
}

// writeError maps a failed condition (alone or inside a transaction, including a transaction
// that collided with another on the same item) to ErrConflict.
func writeError(what string, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("%w: %s", routestate.ErrConflict, what)
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if c := aws.ToString(r.Code); c == "ConditionalCheckFailed" || c == "TransactionConflict" {
				return fmt.Errorf("%w: %s (%s)", routestate.ErrConflict, what, c)
			}
		}
	}
	var tc *types.TransactionConflictException
	if errors.As(err, &tc) {
		return fmt.Errorf("%w: %s", routestate.ErrConflict, what)
	}
	return fmt.Errorf("dynamostore: %s: %w", what, err)
}

func (s *Store) Claim(ctx context.Context, c routestate.Claim) (bool, error) {
	item := key("claim#"+c.ID, skClaim)
	item["at"] = &types.AttributeValueMemberS{Value: c.At.UTC().Format(time.RFC3339Nano)}
	item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(c.Expires.Unix(), 10)}
	// TTL deletes lazily (up to days late), so an expired claim still present is taken over.
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &s.table,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #exp <= :at"),
		ExpressionAttributeNames:  map[string]string{"#exp": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": &types.AttributeValueMemberN{Value: strconv.FormatInt(c.At.Unix(), 10)}},
	})
	if err == nil {
		return true, nil
	}
	if err := writeError("claim "+c.ID, err); !errors.Is(err, routestate.ErrConflict) {
		return false, err
	}
	return false, nil
}

func (s *Store) Release(ctx context.Context, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: key("claim#"+id, skClaim)})
	if err != nil {
		return fmt.Errorf("dynamostore: release %s: %w", id, err)
	}
	return nil
}

func (s *Store) Window(ctx context.Context, route string) (routestate.Window, error) {
	item, err := s.get(ctx, pkWindow, route)
	if err != nil || item == nil {
		return routestate.Window{Route: route}, err
	}
	var w routestate.Window
	return w, unmarshal(item, &w)
}

func (s *Store) PutWindow(ctx context.Context, w routestate.Window) (routestate.Window, error) {
	cond, names, values := versionCondition(w.Version)
	w.Version++
	item, err := marshal(w, pkWindow, w.Route)
	if err != nil {
		return routestate.Window{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: item,
		ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
	if err != nil {
		return routestate.Window{}, writeError("window "+w.Route, err)
	}
	return w, nil
}

func (s *Store) Snapshot(ctx context.Context, id string) (routestate.Snapshot, error) {
	item, err := s.get(ctx, pkAction, id)
	if err != nil {
		return routestate.Snapshot{}, err
	}
	if item == nil {
		return routestate.Snapshot{}, routestate.ErrNotFound
	}
	var snap routestate.Snapshot
	return snap, unmarshal(item, &snap)
}

func (s *Store) Snapshots(ctx context.Context, limit int) ([]routestate.Snapshot, error) {
	items, err := s.query(ctx, pkAction, false, limit)
	if err != nil {
		return nil, err
	}
	out := make([]routestate.Snapshot, 0, len(items))
	for _, it := range items {
		var snap routestate.Snapshot
		if err := unmarshal(it, &snap); err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	return out, nil
}

func (s *Store) Incident(ctx context.Context, id string) (routestate.Incident, error) {
	item, err := s.get(ctx, pkIncident, id)
	if err != nil || item == nil {
		return routestate.Incident{ID: id}, err
	}
	var in routestate.Incident
	return in, unmarshal(item, &in)
}

func (s *Store) PutIncident(ctx context.Context, in routestate.Incident) (routestate.Incident, error) {
	cond, names, values := versionCondition(in.Version)
	in.Version++
	item, err := marshal(in, pkIncident, in.ID)
	if err != nil {
		return routestate.Incident{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: item,
		ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
	if err != nil {
		return routestate.Incident{}, writeError("incident "+in.ID, err)
	}
	return in, nil
}

func (s *Store) Incidents(ctx context.Context) ([]routestate.Incident, error) {
	items, err := s.query(ctx, pkIncident, true, 0)
	if err != nil {
		return nil, err
	}
	out := make([]routestate.Incident, 0, len(items))
	for _, it := range items {
		var in routestate.Incident
		if err := unmarshal(it, &in); err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// CreateTable creates a table with the schema the store expects and waits until it is
// active: for local development and tests (the IaC owns real tables).
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	if err := dynamotable.Create(ctx, db, table, dynamotable.Schema{Partition: KeyPartition, Sort: KeySort, TTL: AttrTTL}); err != nil {
		return fmt.Errorf("dynamostore: %w", err)
	}
	return nil
}

var _ routestate.Store = (*Store)(nil)
