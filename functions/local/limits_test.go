package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
)

const xprocKey = "key-across-processes-1"

// TestLimitsHoldAcrossProcesses starts three local servers sharing one counter store (a file,
// DynamoDB on moto_server, Firestore on its emulator) and hammers them at once with eight
// clients each. The requests admitted past the key's limit are bounded by the instances times
// the requests in flight at the crossing (3 x 8); the stores whose admission is one atomic
// write (file, DynamoDB) admit exactly the limit.
func TestLimitsHoldAcrossProcesses(t *testing.T) {
	for _, b := range []struct {
		name   string
		atomic bool
		store  func(t *testing.T) string // the counters: section's store settings
	}{
		{"file", true, func(t *testing.T) string {
			return fmt.Sprintf("store: file, path: %q", filepath.Join(t.TempDir(), "counters.json"))
		}},
		{"dynamodb", true, func(t *testing.T) string {
			endpoint := emulator.Moto(t)
			awstest.Isolate(t, "test")
			db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
			table := fmt.Sprintf("fngate-xproc-%d", time.Now().UnixNano())
			if err := dynamocounters.CreateTable(context.Background(), db, table); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("store: dynamodb, table: %s, region: us-east-1, endpoint: %q", table, endpoint)
		}},
		{"firestore", false, func(t *testing.T) string {
			t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
			return fmt.Sprintf("store: firestore, project: fngate-test, prefix: xproc%d_, shards: 4", time.Now().UnixNano())
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			store := b.store(t)
			// A minute that rolls over during the hammer would admit a second minute's worth:
			// then the hammer runs again, on a fresh key.
			for try := 0; ; try++ {
				before := counters.At(time.Now())
				n, limit, bound := hammerProcesses(t, store, try)
				if counters.At(time.Now()).Minute != before.Minute && try < 3 {
					t.Logf("the minute rolled over during the hammer (%d admitted); again", n)
					continue
				}
				t.Logf("%d requests admitted on a limit of %d across 3 processes (bound %d)", n, limit, bound)
				if n < limit || n > bound || b.atomic && n != limit {
					t.Fatalf("%d requests admitted on a limit of %d across 3 processes; want %d to %d (exactly %d when atomic: %v)", n, limit, limit, bound, limit, b.atomic)
				}
				return
			}
		})
	}
}

// hammerProcesses starts three servers on one store and returns how many requests they
// admitted, the limit, and the most the bound allows.
func hammerProcesses(t *testing.T, store string, try int) (admitted, limit, bound int64) {
	const processes, clients, each = 3, 8, 5
	limit = 20
	key := fmt.Sprintf("%s-%d", xprocKey, try)
	cfg := fmt.Sprintf(`
keys: [{name: app%d, value: %s, rate: {requests_per_minute: %d}}]
counters: {%s, timeout: 20s, on_store_error: closed}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, try, key, limit, store)
	var addrs []string
	for range processes {
		_, addr := startServer(t, cfg, "-route-state", "off")
		addrs = append(addrs, addr)
	}
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	client := &http.Client{Timeout: time.Minute}
	for _, addr := range addrs {
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range each {
					req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions",
						strings.NewReader(`{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
					req.Header.Set("Authorization", "Bearer "+key)
					resp, err := client.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					switch resp.StatusCode {
					case 200:
						ok.Add(1)
					case 429:
					default:
						t.Errorf("status %d: %s", resp.StatusCode, body)
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	return ok.Load(), limit, limit + processes*clients
}
