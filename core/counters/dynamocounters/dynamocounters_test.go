package dynamocounters_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// TestHistoryAgainstMoto runs the history contract on moto_server's DynamoDB, one fresh
// table per subtest, and then what a day's item holds.
func TestHistoryAgainstMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n atomic.Int64
	open := func(t *testing.T) (*dynamocounters.Store, string) {
		table := fmt.Sprintf("fngate-history-%d-%d", time.Now().UnixNano(), n.Add(1))
		if err := dynamocounters.CreateTable(ctx, db, table); err != nil {
			t.Fatal(err)
		}
		return dynamocounters.New(db, table), table
	}
	counterstest.RunHistory(t, func(t *testing.T) counters.History {
		s, _ := open(t)
		return s
	})

	t.Run("a day is one item beside the counters, with its TTL", func(t *testing.T) {
		s, table := open(t)
		at := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)
		w := counters.At(at)
		if _, ok, err := s.Take(ctx, "app", w, []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1, Max: 0, Limited: true}}); err != nil || !ok {
			t.Fatalf("take: %v %v", ok, err)
		}
		for _, m := range []string{"openai/gpt-4.1", "openai/gpt-4.1", "a:b"} {
			if err := s.AddUsage(ctx, "app", at, m, counters.Usage{Requests: 1, InputTokens: 2, OutputTokens: 3, CostNanoUSD: 4}); err != nil {
				t.Fatal(err)
			}
		}
		// The counter item is untouched: its limit of one request still refuses a second.
		if _, ok, err := s.Take(ctx, "app", w, []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1, Max: 0, Limited: true}}); err != nil || ok {
			t.Fatalf("second take: admitted %v (%v); the history must not touch the counters", ok, err)
		}
		out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: &table})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Items) != 2 {
			t.Fatalf("%d items; want the counters' and one for the day", len(out.Items))
		}
		var hist map[string]types.AttributeValue
		for _, it := range out.Items {
			if it["pk"].(*types.AttributeValueMemberS).Value == "hist#app#2026-11-29" {
				hist = it
			}
		}
		if hist == nil {
			t.Fatalf("no item hist#app#2026-11-29 in %v", out.Items)
		}
		var names []string
		for name := range hist {
			names = append(names, name)
		}
		slices.Sort(names)
		want := []string{"c|a:b", "c|openai/gpt-4.1", "day", "expires_at", "i|a:b", "i|openai/gpt-4.1", "key",
			"o|a:b", "o|openai/gpt-4.1", "pk", "r|a:b", "r|openai/gpt-4.1"}
		if !slices.Equal(names, want) {
			t.Fatalf("history item attributes = %q, want %q", names, want)
		}
		if v := hist["r|openai/gpt-4.1"].(*types.AttributeValueMemberN).Value; v != "2" {
			t.Fatalf("r|openai/gpt-4.1 = %s, want 2", v)
		}
		wantTTL := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).AddDate(0, 0, counters.HistoryDays).Unix()
		if v := hist[dynamocounters.AttrTTL].(*types.AttributeValueMemberN).Value; v != fmt.Sprint(wantTTL) {
			t.Fatalf("expires_at = %s, want %d (the day's end plus %d days)", v, wantTTL, counters.HistoryDays)
		}
		for _, bad := range []string{"", strings.Repeat("m", 513)} {
			if err := s.AddUsage(ctx, "app", at, bad, counters.Usage{Requests: 1}); err == nil {
				t.Errorf("AddUsage with a model of %d bytes succeeded", len(bad))
			}
		}
	})
}
