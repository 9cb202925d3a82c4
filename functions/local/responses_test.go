package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/dynamostore"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/gatewaytest"
)

func TestResponseStoreFromConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	const models = "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	for _, tc := range []struct {
		yaml, want, err string
	}{
		{"", "memory", ""},
		{"responses: {store: memory}", "memory", ""},
		{"responses: {store: none}", "none", ""},
		{"responses: {store: file, path: " + dir + "}", "file " + dir, ""},
		{"responses:\n  store: dynamodb\n", "", "line 2: responses.store: responses: store dynamodb needs a table (responses.table)"},
	} {
		cfg, err := config.Parse(context.Background(), []byte(tc.yaml+"\n"+models), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, what, closeStore, err := responseStore(context.Background(), cfg)
		defer closeStore()
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err = %v\nwant %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want {
			t.Errorf("%q: opened %q, %v; want %q", tc.yaml, what, err, tc.want)
			continue
		}
		if (s == nil) != (tc.want == "none") {
			t.Errorf("%q: store %v", tc.yaml, s)
		}
		if s == nil {
			continue
		}
		now := time.Now()
		if err := s.Put(context.Background(), &responsestore.Stored{ID: "resp_1", Owner: "app", Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Errorf("%q: Put: %v", tc.yaml, err)
		}
		if strings.HasPrefix(tc.want, "file") {
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the file store wrote %d files to %s", len(entries), dir)
			}
		}
	}
}

// TestResponsesAcrossProcesses starts two local servers on one response store (a directory,
// DynamoDB on moto, Firestore on its emulator): a response stored by one is continued,
// fetched and deleted on the other.
func TestResponsesAcrossProcesses(t *testing.T) {
	for _, b := range []struct {
		name  string
		store func(t *testing.T) string // the responses: section's store settings
	}{
		{"file", func(t *testing.T) string {
			return fmt.Sprintf("store: file, path: %q", filepath.Join(t.TempDir(), "responses"))
		}},
		{"dynamodb", func(t *testing.T) string {
			endpoint := emulator.Moto(t)
			awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
			db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
			table := fmt.Sprint("fngate-xproc-responses-", time.Now().UnixNano())
			if err := dynamostore.CreateTable(context.Background(), db, table); err != nil {
				t.Fatal(err)
			}
			return "store: dynamodb, table: " + table
		}},
		{"firestore", func(t *testing.T) string {
			t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
			return fmt.Sprintf("store: firestore, project: fngate-test, collection: xproc_responses_%d", time.Now().UnixNano())
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			// The emulators answer slower than the default timeout on a busy machine.
			cfg := fmt.Sprintf(`
responses: {%s, timeout: 15s}
keys: [{name: app, value: key-xproc-responses-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, b.store(t))
			var addrs []string
			for range 2 {
				_, addr := startServer(t, cfg, "-route-state", "off")
				addrs = append(addrs, addr)
			}
			gatewaytest.StoredAcrossInstances(t, func(t *testing.T, i int, method, path, body string) (int, []byte) {
				t.Helper()
				req, err := http.NewRequest(method, "http://"+addrs[i]+path, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer key-xproc-responses-1")
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				out, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return resp.StatusCode, out
			}, "m")
		})
	}
}
