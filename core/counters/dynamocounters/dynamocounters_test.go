package dynamocounters_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/counters/internal/counterstest"
	"github.com/fngate/fngate/internal/emulator"
)

// TestStoreAgainstMoto runs the counters contract on moto_server's DynamoDB, one fresh table
// per subtest.
func TestStoreAgainstMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n atomic.Int64
	counterstest.Run(t, func(t *testing.T) counters.Store {
		table := fmt.Sprintf("fngate-counters-%d-%d", time.Now().UnixNano(), n.Add(1))
		if err := dynamocounters.CreateTable(ctx, db, table); err != nil {
			t.Fatal(err)
		}
		return dynamocounters.New(db, table)
	}, counterstest.Options{Atomic: true})
}

// TestPassedWindowsAreRemoved: the item sheds the attributes of passed windows as the key is
// written (each write removes what the one before it found stale), and carries the TTL
// attribute of its month.
func TestPassedWindowsAreRemoved(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	ctx := context.Background()
	table := fmt.Sprintf("fngate-counters-ttl-%d", time.Now().UnixNano())
	if err := dynamocounters.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	s := dynamocounters.New(db, table)
	t0 := time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)
	charge := []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1}, {Counter: counters.Counter{Kind: counters.SpendDay}, N: 5}}
	for i := range 4 {
		if _, ok, err := s.Take(ctx, "app", counters.At(t0.Add(time.Duration(i)*time.Minute)), charge); err != nil || !ok {
			t.Fatalf("take %d: %v %v", i, ok, err)
		}
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "app"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The last write saw the minute before become stale; the key's next write removes it.
	last, before := counters.At(t0.Add(3*time.Minute)), counters.At(t0.Add(2*time.Minute))
	var names []string
	for name := range out.Item {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{counters.Field(counters.Counter{Kind: counters.SpendDay}, last), counters.Field(counters.Counter{Kind: counters.Requests}, last),
		counters.Field(counters.Counter{Kind: counters.Requests}, before),
		dynamocounters.AttrTTL, dynamocounters.KeyPartition, "w_M", "w_d", "w_m"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("item attributes = %q, want %q", names, want)
	}
	if v := out.Item[dynamocounters.AttrTTL].(*types.AttributeValueMemberN).Value; v != fmt.Sprint(last.Expires().Unix()) {
		t.Fatalf("expires_at = %s, want %d (the end of the month)", v, last.Expires().Unix())
	}
}
