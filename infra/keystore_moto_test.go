package infra

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/keystore/dynamostore"
	"github.com/fngate/fngate/internal/emulator"
)

// TestKeysTableCreatesOnMoto creates the key store's table as SAM and as the Terraform module
// define it, on moto_server's DynamoDB, which refuses what DynamoDB refuses (an attribute
// definition no key or index uses, an index on an undefined attribute): both tables are
// created, and come out as the one dynamostore.CreateTable makes.
func TestKeysTableCreatesOnMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The store's own: the table its CreateTable makes (local development, tests).
	store := fmt.Sprintf("fngate-keys-store-%d", time.Now().UnixNano())
	if err := dynamostore.CreateTable(ctx, db, store); err != nil {
		t.Fatal(err)
	}
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(store)})
	if err != nil {
		t.Fatal(err)
	}
	want := tableShape(out.Table)

	sam, tf := samKeysTable(t), tfKeysTable(t)
	for what, in := range map[string]*dynamodb.CreateTableInput{"SAM": sam, "Terraform": tf} {
		in.TableName = aws.String(fmt.Sprintf("fngate-keys-%s-%d", what, time.Now().UnixNano()))
		if _, err := db.CreateTable(ctx, in); err != nil {
			t.Fatalf("the %s key store table is refused: %v", what, err)
		}
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
		if err != nil {
			t.Fatal(err)
		}
		if got := tableShape(out.Table); got != want {
			t.Errorf("%s's key store differs from dynamostore.CreateTable's:\n got %s\nwant %s", what, got, want)
		}
	}

	// The check must actually look: an attribute definition no key uses is refused.
	bad := samKeysTable(t)
	bad.TableName = aws.String(fmt.Sprintf("fngate-keys-bad-%d", time.Now().UnixNano()))
	bad.AttributeDefinitions = append(bad.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("unused"), AttributeType: types.ScalarAttributeTypeS})
	if _, err := db.CreateTable(ctx, bad); err == nil {
		t.Errorf("moto created a table with an unused attribute definition: this test proves nothing")
	}
}

// tableShape is a table's keys and indexes as one comparable line.
func tableShape(d *types.TableDescription) string {
	var attrs []string
	for _, a := range d.AttributeDefinitions {
		attrs = append(attrs, aws.ToString(a.AttributeName)+":"+string(a.AttributeType))
	}
	sort.Strings(attrs)
	keys := func(ks []types.KeySchemaElement) string {
		var out []string
		for _, k := range ks {
			out = append(out, aws.ToString(k.AttributeName)+":"+string(k.KeyType))
		}
		return fmt.Sprint(out)
	}
	var idx []string
	for _, g := range d.GlobalSecondaryIndexes {
		idx = append(idx, aws.ToString(g.IndexName)+keys(g.KeySchema)+string(g.Projection.ProjectionType))
	}
	sort.Strings(idx)
	return fmt.Sprintf("attributes %v keys %s indexes %v", attrs, keys(d.KeySchema), idx)
}

func samKeysTable(t *testing.T) *dynamodb.CreateTableInput {
	t.Helper()
	tbl, err := samFor(t, nil).tmpl.GetDynamoDBTableWithName("KeysTable")
	if err != nil {
		t.Fatal(err)
	}
	in := &dynamodb.CreateTableInput{BillingMode: types.BillingMode(aws.ToString(tbl.BillingMode))}
	for _, a := range tbl.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.AttributeName),
			AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, k := range tbl.KeySchema {
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
	}
	for _, g := range tbl.GlobalSecondaryIndexes {
		gsi := types.GlobalSecondaryIndex{IndexName: aws.String(g.IndexName),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(aws.ToString(g.Projection.ProjectionType))}}
		for _, k := range g.KeySchema {
			gsi.KeySchema = append(gsi.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsi)
	}
	return in
}

func tfKeysTable(t *testing.T) *dynamodb.CreateTableInput {
	t.Helper()
	m := parseModule(t, "terraform/aws")
	ctx := tfContext(t, m, nil)
	tbl := m.find("resource", "aws_dynamodb_table", "keys")
	keySchema := func(hash, rng string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
		if rng != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	in := &dynamodb.CreateTableInput{BillingMode: types.BillingMode(valString(t, ctx, tbl, "billing_mode")),
		KeySchema: keySchema(valString(t, ctx, tbl, "hash_key"), valString(t, ctx, tbl, "range_key"))}
	for _, b := range tbl.Body.Blocks {
		switch b.Type {
		case "attribute":
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(valString(t, ctx, b, "name")),
				AttributeType: types.ScalarAttributeType(valString(t, ctx, b, "type"))})
		case "global_secondary_index":
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{IndexName: aws.String(valString(t, ctx, b, "name")),
				KeySchema:  keySchema(valString(t, ctx, b, "hash_key"), valString(t, ctx, b, "range_key")),
				Projection: &types.Projection{ProjectionType: types.ProjectionType(valString(t, ctx, b, "projection_type"))}})
		}
	}
	if !slices.ContainsFunc(in.AttributeDefinitions, func(a types.AttributeDefinition) bool { return aws.ToString(a.AttributeName) == "pk" }) {
		t.Fatalf("the module's keys table defines no pk")
	}
	return in
}
