// Package dynamotable creates the DynamoDB tables of fngate's stores (route state, counters,
// stored responses, the response cache, MCP sessions) for local development and tests, where
// the IaC owns real tables, and holds what those stores share about items: their size as
// DynamoDB counts it and the layout of their times (itemsize.go).
package dynamotable

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Schema names a table's string keys and its TTL attribute. Sort and TTL may be empty.
type Schema struct {
	Partition, Sort, TTL string
}

// Create creates an on-demand table with the schema, waits until it is active, and turns
// TTL on when the schema has a TTL attribute.
func Create(ctx context.Context, db *dynamodb.Client, table string, s Schema) error {
	attrs := []types.AttributeDefinition{{AttributeName: aws.String(s.Partition), AttributeType: types.ScalarAttributeTypeS}}
	keys := []types.KeySchemaElement{{AttributeName: aws.String(s.Partition), KeyType: types.KeyTypeHash}}
	if s.Sort != "" {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(s.Sort), AttributeType: types.ScalarAttributeTypeS})
		keys = append(keys, types.KeySchemaElement{AttributeName: aws.String(s.Sort), KeyType: types.KeyTypeRange})
	}
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: types.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: keys,
	})
	if err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	w := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", table, err)
	}
	if s.TTL == "" {
		return nil
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(s.TTL), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable TTL on %s: %w", table, err)
	}
	return nil
}
