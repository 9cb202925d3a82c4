package config

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestResponsesStoreSettings(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want Responses
	}{
		{"", Responses{Store: Store{Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(DefaultResponsesTTL)}},
		{"responses: {store: memory}", Responses{Store: Store{Kind: StoreMemory, Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(DefaultResponsesTTL)}},
		{"responses: {store: none}", Responses{Store: Store{Kind: StoreNone, Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(DefaultResponsesTTL)}},
		{"responses: {store: file}", Responses{Store: Store{Kind: StoreFile, Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(DefaultResponsesTTL)}},
		{"responses: {store: file, path: /var/lib/fngate, ttl: 1h}", Responses{Store: Store{Kind: StoreFile, Path: "/var/lib/fngate", Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(time.Hour)}},
		{"responses: {store: dynamodb, table: fngate-responses, timeout: 500ms}", Responses{Store: Store{Kind: StoreDynamoDB, Table: "fngate-responses", Timeout: Duration(500 * time.Millisecond)}, TTL: Duration(DefaultResponsesTTL)}},
		{"responses: {store: dynamodb}", Responses{Store: Store{Kind: StoreDynamoDB, Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(DefaultResponsesTTL)}},
		{"responses: {store: firestore, project: p, database: d, ttl: 7d}", Responses{}}, // 7d is no Go duration: refused below
		{"responses: {store: firestore, project: p, database: d, ttl: 168h}", Responses{Store: Store{Kind: StoreFirestore, Project: "p", Database: "d", Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(168 * time.Hour)}},
		{"responses: {store: firestore, collection: chats}", Responses{Store: Store{Kind: StoreFirestore, Collection: "chats", Timeout: Duration(DefaultStoreTimeout)}, TTL: Duration(DefaultResponsesTTL)}},
	} {
		cfg, err := Parse(context.Background(), []byte(tc.yaml+"\n"+base), Options{})
		if reflect.DeepEqual(tc.want, Responses{}) {
			if err == nil {
				t.Errorf("%s: accepted", tc.yaml)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		if !reflect.DeepEqual(cfg.Responses, tc.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tc.yaml, cfg.Responses, tc.want)
		}
	}
}

// Each mistake is refused at load with the key path and the line marked "# <-".
func TestResponsesStoreMistakes(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, path, why string
	}{
		{"an unknown store", "responses:\n  store: redis # <-\n", "responses.store", `must be memory, file, dynamodb, firestore or none, got "redis"`},
		{"a setting of another store", "responses:\n  store: file\n  table: t-1 # <-\n", "responses.table", "the file store has no table setting"},
		{"a setting without a store", "responses:\n  collection: c # <-\n", "responses.collection", "is set but responses.store is not"},
		{"a misspelt setting", "responses:\n  store: dynamodb\n  tabel: t-1 # <-\n", "responses.tabel", "is not a setting of responses"},
		{"a bad table name", "responses:\n  store: dynamodb\n  table: a/b # <-\n", "responses.table", "3 to 255 letters"},
		{"a collection path", "responses:\n  store: firestore\n  collection: a/b # <-\n", "responses.collection", "has no '/'"},
		{"a reserved collection id", "responses:\n  store: firestore\n  collection: __x__ # <-\n", "responses.collection", "__.*__"},
		{"a long timeout", "responses:\n  store: file\n  timeout: 5m # <-\n", "responses.timeout", "must be at most 30s"},
		{"a negative timeout", "responses:\n  store: file\n  timeout: -1s # <-\n", "responses.timeout", "invalid duration"},
		{"a tiny ttl", "responses:\n  store: memory\n  ttl: 10ms # <-\n", "responses.ttl", "must be at least 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := 0
			for i, l := range strings.Split(tc.yaml, "\n") {
				if strings.Contains(l, "# <-") {
					line = i + 1
				}
			}
			_, err := Parse(context.Background(), []byte(tc.yaml+base), Options{})
			if err == nil {
				t.Fatal("accepted")
			}
			where := fmt.Sprintf("line %d: %s", line, tc.path)
			if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q\nwant it to name %q and say %q", err, where, tc.why)
			}
		})
	}
}

func TestResponsesTableFromEnvironment(t *testing.T) {
	cfg, err := Parse(context.Background(), []byte("responses: {store: dynamodb, table: \"${RESPONSES_TABLE}\"}\n"+base),
		Options{Getenv: env(map[string]string{"RESPONSES_TABLE": "stack-responses"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Responses.Table != "stack-responses" {
		t.Errorf("table = %q", cfg.Responses.Table)
	}
}

// The counters are a store section too: the settings each kind takes, the settings of the
// platforms' stores (DynamoDB, Firestore) without a named store, which Lambda and Cloud
// Functions apply to theirs, and the counters' own defaults.
func TestCountersStoreSettings(t *testing.T) {
	timeout := Duration(DefaultCountersTimeout)
	for _, tc := range []struct {
		yaml string
		want Counters
	}{
		{"", Counters{Store: Store{Timeout: timeout}, OnStoreError: StoreErrorOpen}},
		{"counters: {store: memory, on_store_error: closed}", Counters{Store: Store{Kind: StoreMemory, Timeout: timeout}, OnStoreError: StoreErrorClosed}},
		{"counters: {store: file}", Counters{Store: Store{Kind: StoreFile, Path: DefaultCountersFile, Timeout: timeout}, OnStoreError: StoreErrorOpen}},
		{"counters: {store: dynamodb, table: fngate-counters, region: eu-west-1, endpoint: \"http://127.0.0.1:8000\", timeout: 20s}",
			Counters{Store: Store{Kind: StoreDynamoDB, Table: "fngate-counters", Timeout: Duration(20 * time.Second)}, Region: "eu-west-1", Endpoint: "http://127.0.0.1:8000", OnStoreError: StoreErrorOpen}},
		{"counters: {store: firestore, project: p, database: d, prefix: x_, shards: 4}",
			Counters{Store: Store{Kind: StoreFirestore, Project: "p", Database: "d", Timeout: timeout}, Prefix: "x_", Shards: 4, OnStoreError: StoreErrorOpen}},
		{"counters: {table: fngate-counters, region: eu-west-1}", Counters{Store: Store{Table: "fngate-counters", Timeout: timeout}, Region: "eu-west-1", OnStoreError: StoreErrorOpen}},
		{"counters: {database: d, prefix: x_, shards: 16}", Counters{Store: Store{Database: "d", Timeout: timeout}, Prefix: "x_", Shards: 16, OnStoreError: StoreErrorOpen}},
		{"counters: {store: none}", Counters{}},                         // no store is no limit: refused
		{"counters: {store: firestore, region: eu-west-1}", Counters{}}, // a DynamoDB setting: refused
		{"counters: {store: memory, shards: -1}", Counters{}},
	} {
		cfg, err := Parse(context.Background(), []byte(tc.yaml+"\n"+base), Options{})
		if reflect.DeepEqual(tc.want, Counters{}) {
			if err == nil {
				t.Errorf("%s: accepted", tc.yaml)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		if !reflect.DeepEqual(cfg.Counters, tc.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tc.yaml, cfg.Counters, tc.want)
		}
	}
}

// The table-name check accepts exactly what DynamoDB's pattern does.
func TestDynamoTableNameMatchesDynamoDBsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)
	for _, name := range []string{"", "ab", "abc", "my-table_1.v2", "a/b", "tab le", "ünï", strings.Repeat("a", 255), strings.Repeat("a", 256), "abc\n"} {
		if got, want := validDynamoTableName(name), pattern.MatchString(name); got != want {
			t.Errorf("validDynamoTableName(%q) = %v, want %v", name, got, want)
		}
	}
}
