package gateway_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fngate/fngate/core/responsecache"
	cachedynamo "github.com/fngate/fngate/core/responsecache/dynamostore"
	cachefirestore "github.com/fngate/fngate/core/responsecache/firestorestore"
	"github.com/fngate/fngate/internal/emulator"
)

// cacheStore is one kind of response cache store the cache tests run on. start, once per
// test, starts what the store needs (moto_server, the Firestore emulator) and returns open,
// which gives each subtest an empty store of its own as two handles, one per instance, that
// decide expiry by now; down returns a handle on a store that cannot be reached.
type cacheStore struct {
	name  string
	start func(t *testing.T) (open func(t *testing.T, now func() time.Time) [2]responsecache.Store)
	down  func(t *testing.T) responsecache.Store
}

var cacheNames atomic.Int64

var cacheStores = []cacheStore{
	{name: "memory", start: func(*testing.T) func(*testing.T, func() time.Time) [2]responsecache.Store {
		return func(_ *testing.T, now func() time.Time) [2]responsecache.Store {
			m := responsecache.NewMemory()
			m.Now = now
			return [2]responsecache.Store{m, m}
		}
	}, down: func(*testing.T) responsecache.Store { return &failingCache{} }},
	{name: "file", start: func(*testing.T) func(*testing.T, func() time.Time) [2]responsecache.Store {
		return func(t *testing.T, now func() time.Time) [2]responsecache.Store {
			dir := t.TempDir()
			var s [2]responsecache.Store
			for i := range s {
				f, err := responsecache.OpenFile(dir)
				if err != nil {
					t.Fatal(err)
				}
				f.Now = now
				s[i] = f
			}
			return s
		}
	}, down: func(*testing.T) responsecache.Store { return &failingCache{} }},
	{name: "dynamodb", start: func(t *testing.T) func(*testing.T, func() time.Time) [2]responsecache.Store {
		endpoint := emulator.Moto(t)
		return func(t *testing.T, now func() time.Time) [2]responsecache.Store {
			table := fmt.Sprintf("fngate-cache-%d", cacheNames.Add(1))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cachedynamo.CreateTable(ctx, dynamoClient(endpoint), table); err != nil {
				t.Fatal(err)
			}
			// moto answers one request at a time: a call may wait for others'.
			o := cachedynamo.Options{Now: now, Timeout: 20 * time.Second}
			return [2]responsecache.Store{cachedynamo.New(dynamoClient(endpoint), table, o), cachedynamo.New(dynamoClient(endpoint), table, o)}
		}
	}, down: func(*testing.T) responsecache.Store {
		// A closed loopback port: the call is refused, as an unreachable endpoint's is.
		return cachedynamo.New(dynamoClient("http://127.0.0.1:1"), "fngate-cache", cachedynamo.Options{Timeout: 300 * time.Millisecond})
	}},
	{name: "firestore", start: func(t *testing.T) func(*testing.T, func() time.Time) [2]responsecache.Store {
		host := emulator.Firestore(t)
		return func(t *testing.T, now func() time.Time) [2]responsecache.Store {
			col := fmt.Sprintf("fngate_cache_%d", cacheNames.Add(1))
			var s [2]responsecache.Store
			for i := range s {
				s[i] = cachefirestore.New(firestoreClient(t, host), col, cachefirestore.Options{Now: now, Timeout: 20 * time.Second})
			}
			return s
		}
	}, down: func(t *testing.T) responsecache.Store {
		return cachefirestore.New(firestoreClient(t, "127.0.0.1:1"), "fngate_cache", cachefirestore.Options{Timeout: 300 * time.Millisecond})
	}},
}

func dynamoClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

func firestoreClient(t *testing.T, host string) *firestore.Client {
	c, err := firestore.NewClient(context.Background(), "fngate-test", option.WithEndpoint(host), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithGRPCDialOption(grpc.WithPerRPCCredentials(emulatorOwner{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// onEveryCacheStore runs test once per store kind, each run starting what its store needs.
func onEveryCacheStore(t *testing.T, test func(t *testing.T, st cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store)) {
	for _, st := range cacheStores {
		t.Run(st.name, func(t *testing.T) {
			test(t, st, st.start(t))
		})
	}
}
