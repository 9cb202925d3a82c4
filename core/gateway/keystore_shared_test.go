package gateway_test

import (
	"context"
	"fmt"
	"path/filepath"
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

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/dynamostore"
	"github.com/fngate/fngate/core/keystore/firestorestore"
	"github.com/fngate/fngate/internal/emulator"
)

// The shared stores' rows of sharedKeyStores: each opens two handles on one store, as two
// instances (two local servers, two functions' instances) each open their own.

// openFileKeys opens two file stores on one file, as two local servers do.
func openFileKeys(t *testing.T) (keystore.Store, keystore.Store) {
	path := filepath.Join(t.TempDir(), "keys.json")
	var s [2]keystore.Store
	for i := range s {
		f, err := keystore.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s[i] = f
	}
	return s[0], s[1]
}

var tables atomic.Int64

// openDynamoKeys opens two clients on one table of a moto_server started for the test.
func openDynamoKeys(t *testing.T) (keystore.Store, keystore.Store) {
	endpoint := emulator.Moto(t)
	client := func() *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	}
	table := fmt.Sprintf("fngate-keys-%d", tables.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, client(), table); err != nil {
		t.Fatal(err)
	}
	o := dynamostore.Options{Timeout: 5 * time.Second}
	return dynamostore.New(client(), table, o), dynamostore.New(client(), table, o)
}

// emulatorOwner is the emulator's credential, as the Firestore client sends it when
// FIRESTORE_EMULATOR_HOST is set; the tests that run in parallel cannot set that variable.
type emulatorOwner struct{}

func (emulatorOwner) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}
func (emulatorOwner) RequireTransportSecurity() bool { return false }

// openFirestoreKeys opens two clients on one collection of a Firestore emulator started for
// the test.
func openFirestoreKeys(t *testing.T) (keystore.Store, keystore.Store) {
	host := emulator.Firestore(t)
	var s [2]keystore.Store
	for i := range s {
		c, err := firestore.NewClient(context.Background(), "fngate-test", option.WithEndpoint(host), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
			option.WithGRPCDialOption(grpc.WithPerRPCCredentials(emulatorOwner{})))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// A fresh emulator takes seconds over its first transaction, past the store's timeout.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = c.RunTransaction(ctx, func(_ context.Context, tx *firestore.Transaction) error {
			_, err := tx.GetAll([]*firestore.DocumentRef{c.Collection(config.DefaultKeysCollection).Doc("warm")})
			return err
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		s[i] = firestorestore.New(c, config.DefaultKeysCollection, firestorestore.Options{Timeout: 5 * time.Second})
	}
	return s[0], s[1]
}

// TestStoredKeyLimitsAcrossInstances: of two instances sharing a key store and counters, a
// stored key's rate limit is one limit across both (the counters follow its id), a raised
// limit reaches both, and a key deleted and made again under its name on one instance starts
// afresh on the other.
func TestStoredKeyLimitsAcrossInstances(t *testing.T) {
	for _, st := range sharedKeyStores {
		t.Run(st.name, func(t *testing.T) {
			clock := newKeyClock()
			store, other := st.open(t)
			cnt := counters.NewMemory()
			shared := func(o *gateway.Options) { o.Counters = cnt }
			one := storedKeysGateway(t, storedKeysConfig, store, clock, shared)
			two := storedKeysGateway(t, storedKeysConfig, other, clock, shared)
			admin := keyAdmin{t, store, clock.Now}
			chat := keyDoors[0]
			secret, id := admin.create("team-a", func(k *keystore.Key) { k.Rate = &config.Rate{RequestsPerMinute: 3} })
			for i, c := range []struct {
				g    *testGateway
				want int
			}{{one, 200}, {two, 200}, {one, 200}, {two, 429}, {one, 429}} {
				if r := chat.call(t, c.g, secret); r.Status != c.want {
					t.Fatalf("request %d: %d %s, want %d (one limit of 3 a minute across both)", i+1, r.Status, r.Body, c.want)
				}
			}
			admin.update(id, "key.update", func(k *keystore.Key) { k.Rate = &config.Rate{RequestsPerMinute: 5} })
			clock.Advance(freshFor)
			for i, g := range []*testGateway{two, one} {
				if r := chat.call(t, g, secret); r.Status != 200 {
					t.Errorf("instance %d after the limit was raised: %d %s", 2-i, r.Status, r.Body)
				}
			}
			if r := chat.call(t, one, secret); r.Status != 429 {
				t.Errorf("past the raised limit: %d %s", r.Status, r.Body)
			}
			admin.update(id, "key.delete", func(k *keystore.Key) { k.Deleted = true })
			again, _ := admin.create("team-a", func(k *keystore.Key) { k.Rate = &config.Rate{RequestsPerMinute: 3} })
			clock.Advance(freshFor)
			if r := chat.call(t, one, secret); r.Status != 401 {
				t.Errorf("the deleted key: %d, want 401", r.Status)
			}
			for i, g := range []*testGateway{two, one, two} {
				if r := chat.call(t, g, again); r.Status != 200 {
					t.Errorf("the new team-a, request %d: %d %s (the old key's counters?)", i+1, r.Status, r.Body)
				}
			}
		})
	}
}
