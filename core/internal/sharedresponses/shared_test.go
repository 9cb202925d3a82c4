package sharedresponses

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/dynamostore"
	"github.com/fngate/fngate/core/responsestore/firestorestore"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/loopback"
)

const (
	appKey   = "sk-gw-shared-responses-app-1"
	otherKey = "sk-gw-shared-responses-other"
	ttl      = time.Hour
)

// The body limit is raised so a request can carry more than the cloud stores keep.
const catalog = `
responses: {ttl: 1h}
limits: {max_body_bytes: 33554432}
keys:
  - {name: app, value: ` + appKey + `}
  - {name: other, value: ` + otherKey + `}
connections: {mock: {kind: mock}}
models:
  mock-echo: {routes: [{connection: mock, model: echo}]}
  mock-tools: {routes: [{connection: mock, model: tools}]}
`

// backend opens, for one test, a function that gives each gateway instance its own store
// value (its own client, as each function instance has) on one shared backend, deciding
// expiry by the test's clock. limited says the store refuses what
// exceeds its limit (sharedMaxBody compressed).
type backend struct {
	name    string
	limited bool
	open    func(t *testing.T) func(now func() time.Time) responsestore.Store
}

var backends = []backend{
	{"memory", false, func(*testing.T) func(func() time.Time) responsestore.Store {
		// Instances in one process share the one map.
		var shared *responsestore.Memory
		return func(now func() time.Time) responsestore.Store {
			if shared == nil {
				shared = responsestore.NewMemory()
				shared.Now = now
			}
			return shared
		}
	}},
	{"file", false, func(t *testing.T) func(func() time.Time) responsestore.Store {
		dir := filepath.Join(t.TempDir(), "responses")
		return func(now func() time.Time) responsestore.Store {
			f, err := responsestore.OpenFile(dir)
			if err != nil {
				t.Fatal(err)
			}
			f.Now = now
			return f
		}
	}},
	{"dynamodb", true, func(t *testing.T) func(func() time.Time) responsestore.Store {
		endpoint := emulator.Moto(t)
		client := func() *dynamodb.Client {
			return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), HTTPClient: awsconf.HTTPClient(),
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		}
		table := fmt.Sprint("fngate-shared-responses-", time.Now().UnixNano())
		if err := dynamostore.CreateTable(context.Background(), client(), table); err != nil {
			t.Fatal(err)
		}
		return func(now func() time.Time) responsestore.Store {
			// moto on a loaded machine answers slower than the default timeout.
			return dynamostore.New(client(), table, dynamostore.Options{Timeout: 20 * time.Second, Now: now, MaxBody: sharedMaxBody})
		}
	}},
	{"firestore", true, func(t *testing.T) func(func() time.Time) responsestore.Store {
		t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
		collection := fmt.Sprint("shared_responses_", time.Now().UnixNano())
		return func(now func() time.Time) responsestore.Store {
			client, err := firestore.NewClient(context.Background(), "fngate-test")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { client.Close() })
			return firestorestore.New(client, collection, firestorestore.Options{Timeout: 20 * time.Second, Now: now, MaxBody: sharedMaxBody})
		}
	}},
}

// clock is the stores' clock: the time, until a test moves it past the responses' ttl.
type clock struct{ ahead atomic.Int64 }

func (c *clock) Now() time.Time       { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *clock) pass(d time.Duration) { c.ahead.Add(int64(d)) }

// instances serves two gateways, a and b, on one backend, each with its own store value.
func instances(t *testing.T, b backend, storeFor func(func() time.Time) responsestore.Store, c *clock, logs *gatewaytest.LogBuffer) (a, bb *gatewaytest.Server) {
	t.Helper()
	cfg := gatewaytest.Config(t, catalog, config.Options{})
	serve := func() *gatewaytest.Server {
		reg := providers.Registry{}
		mock.Register(reg)
		return gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: logs.Logger(), ResponseStore: storeFor(c.Now)})
	}
	return serve(), serve()
}

func client(s *gatewaytest.Server, key string) oai.Client {
	return s.OpenAI(option.WithAPIKey(key), option.WithRequestTimeout(2*time.Minute))
}

func text(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: oai.String(s)}
}

func status(err error) int {
	var e *oai.Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

func stored(t *testing.T, raw string) bool {
	t.Helper()
	var r struct {
		Store *bool `json:"store"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.Store == nil {
		t.Fatalf("no store in %.300s: %v", raw, err)
	}
	return *r.Store
}

// TestAcrossInstances: a response stored by one instance is continued, fetched and deleted
// on the other (a function call it made answered there, streamed, then a third turn back on
// the first), another key sees none of it on either, and a deleted one is gone from both.
func TestAcrossInstances(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var logs gatewaytest.LogBuffer
			c := &clock{}
			ga, gb := instances(t, b, b.open(t), c, &logs)
			a, bc := client(ga, appKey), client(gb, appKey)
			ctx := context.Background()
			tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "lookup", Strict: oai.Bool(false),
				Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}

			first, err := a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-tools", Input: text("find it"), Tools: []responses.ToolUnionParam{tool}})
			if err != nil {
				t.Fatal(err)
			}
			if !stored(t, first.RawJSON()) || len(first.Output) == 0 || first.Output[0].Type != "function_call" {
				t.Fatalf("first: %s", first.RawJSON())
			}
			call := first.Output[0].AsFunctionCall()

			// On the other instance, streamed: the stream's store path keeps the second.
			out := responses.ResponseInputItemParamOfFunctionCallOutput("42")
			out.OfFunctionCallOutput.CallID = oai.String(call.CallID)
			second := gatewaytest.StreamResponse(t, bc, responses.ResponseNewParams{Model: "mock-tools", PreviousResponseID: oai.String(first.ID),
				Tools: []responses.ToolUnionParam{tool}, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{out}}}).Final
			if second.OutputText() != "The tool returned: 42" || second.PreviousResponseID != first.ID || !stored(t, second.RawJSON()) {
				t.Fatalf("second, on b: %s", second.RawJSON())
			}

			// Back on the first: the echo model repeats the last user text, two responses ago.
			third, err := a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(second.ID), Input: text("and again")})
			if err != nil {
				t.Fatal(err)
			}
			if third.OutputText() != "and again" || third.PreviousResponseID != second.ID {
				t.Fatalf("third, on a: %s", third.RawJSON())
			}

			for name, cl := range map[string]oai.Client{"a": a, "b": bc} {
				got, err := cl.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
				if err != nil {
					t.Fatalf("GET on %s: %v", name, err)
				}
				if got.RawJSON() != second.RawJSON() {
					t.Errorf("GET on %s returned\n%s\nwant the streamed response\n%s", name, got.RawJSON(), second.RawJSON())
				}
			}
			for name, g := range map[string]*gatewaytest.Server{"a": ga, "b": gb} {
				other := client(g, otherKey)
				if _, err := other.Responses.Get(ctx, first.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
					t.Errorf("another key's GET on %s: %v", name, err)
				}
				if err := other.Responses.Delete(ctx, first.ID); status(err) != http.StatusNotFound {
					t.Errorf("another key's DELETE on %s: %v", name, err)
				}
			}

			if err := bc.Responses.Delete(ctx, first.ID); err != nil {
				t.Fatalf("DELETE on b: %v", err)
			}
			if _, err := a.Responses.Get(ctx, first.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
				t.Errorf("GET on a after DELETE on b: %v", err)
			}
			_, err = a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(first.ID), Input: text("x")})
			if e := apiError(err); e == nil || e.StatusCode != 400 || e.Code != "previous_response_not_found" {
				t.Errorf("continuing a deleted response on a: %v", err)
			}
			if err := a.Responses.Delete(ctx, first.ID); status(err) != http.StatusNotFound {
				t.Errorf("a second DELETE: %v", err)
			}
			if lines := logs.Lines(t, "response_store"); len(lines) != 0 {
				t.Errorf("store errors logged: %v", lines)
			}
		})
	}
}

// TestItemReferencesAcrossInstances: an item_reference to a function call one instance made
// is resolved on the other from the shared store, on every backend (the stored response
// read by its id and key, which DynamoDB and Firestore answer as they answer
// previous_response_id); another key's request gets the 400 naming the reference.
func TestItemReferencesAcrossInstances(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var logs gatewaytest.LogBuffer
			ga, gb := instances(t, b, b.open(t), &clock{}, &logs)
			ctx := context.Background()
			tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "lookup", Strict: oai.Bool(false),
				Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}
			a, bc, other := client(ga, appKey), client(gb, appKey), client(gb, otherKey)
			first, err := a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-tools", Input: text("find it"),
				Tools: []responses.ToolUnionParam{tool}})
			if err != nil {
				t.Fatal(err)
			}
			call := first.Output[0].AsFunctionCall()
			out := responses.ResponseInputItemParamOfFunctionCallOutput("42")
			out.OfFunctionCallOutput.CallID = oai.String(call.CallID)
			params := responses.ResponseNewParams{Model: "mock-tools", Tools: []responses.ToolUnionParam{tool},
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{
					responses.ResponseInputItemParamOfMessage("find it", responses.EasyInputMessageRoleUser),
					{OfItemReference: &responses.ResponseInputItemItemReferenceParam{ID: call.ID, Type: "item_reference"}},
					out,
				}}}
			second, err := bc.Responses.New(ctx, params)
			if err != nil {
				t.Fatalf("on b: %v", err)
			}
			if second.OutputText() != "The tool returned: 42" {
				t.Errorf("on b: %s", second.RawJSON())
			}
			_, err = other.Responses.New(ctx, params)
			if e := apiError(err); e == nil || e.StatusCode != 400 || e.Param != "input[1]" {
				t.Errorf("another key on b: %v", err)
			}
			if lines := logs.Lines(t, "response_store"); len(lines) != 0 {
				t.Errorf("store errors logged: %v", lines)
			}
		})
	}
}

func apiError(err error) *oai.Error {
	var e *oai.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// TestExpiredAcrossInstances: once its ttl (the config's responses.ttl) has passed, a
// response is gone for every instance, whatever the backend's own TTL has deleted yet: GET
// and DELETE 404, previous_response_id 400 previous_response_not_found. One a minute short of
// its ttl is still there.
func TestExpiredAcrossInstances(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var logs gatewaytest.LogBuffer
			c := &clock{}
			ga, gb := instances(t, b, b.open(t), c, &logs)
			a, bc := client(ga, appKey), client(gb, appKey)
			ctx := context.Background()
			kept, err := a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("soon gone")})
			if err != nil || !stored(t, kept.RawJSON()) {
				t.Fatalf("%v %s", err, kept.RawJSON())
			}
			c.pass(ttl - time.Minute)
			if _, err := bc.Responses.Get(ctx, kept.ID, responses.ResponseGetParams{}); err != nil {
				t.Fatalf("GET on b a minute before the ttl: %v", err)
			}
			c.pass(2 * time.Minute)
			if _, err := bc.Responses.Get(ctx, kept.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
				t.Errorf("GET on b after the ttl: %v", err)
			}
			_, err = bc.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(kept.ID), Input: text("x")})
			if e := apiError(err); e == nil || e.StatusCode != 400 || e.Param != "previous_response_id" || e.Code != "previous_response_not_found" {
				t.Errorf("continuing an expired response on b: %v", err)
			}
			if err := a.Responses.Delete(ctx, kept.ID); status(err) != http.StatusNotFound {
				t.Errorf("DELETE on a after the ttl: %v", err)
			}
		})
	}
}

// incompressible is n bytes of text gzip cannot shrink much (base64 of random bytes).
func incompressible(n int) string {
	b := make([]byte, n*3/4+3)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// TestLargeResponsesAcrossInstances: a conversation larger than one DynamoDB item or
// Firestore document (kept in parts) continues on the other instance whole; one beyond what
// the cloud stores keep (responsestore's 8 MiB compressed) is answered with store: false,
// logged, and found on neither instance, whole or streamed.
func TestLargeResponsesAcrossInstances(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var logs gatewaytest.LogBuffer
			c := &clock{}
			ga, gb := instances(t, b, b.open(t), c, &logs)
			a, bc := client(ga, appKey), client(gb, appKey)
			ctx := context.Background()

			// 800 KB each way, 1.2 MB compressed: parts on both cloud stores.
			big := incompressible(800_000)
			first, err := a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text(big)})
			if err != nil || !stored(t, first.RawJSON()) {
				t.Fatalf("%v %.300s", err, first.RawJSON())
			}
			got, err := bc.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
			if err != nil || got.RawJSON() != first.RawJSON() {
				t.Fatalf("GET on b of a 1.6 MB response: %v (%d bytes, want %d)", err, len(got.RawJSON()), len(first.RawJSON()))
			}
			next, err := bc.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(first.ID), Input: text("short")})
			if err != nil || next.OutputText() != "short" {
				t.Fatalf("continuing it on b: %v %.300s", err, next.RawJSON())
			}

			if !b.limited {
				return // memory and files keep any size (storetest: 8 MiB and more)
			}
			// 1.5 MiB each way: base64 text gzips to about 3/4, so some 2.3 MiB, past the
			// cloud stores' limit here (sharedMaxBody).
			huge := incompressible(3 << 19)
			for _, stream := range []bool{false, true} {
				logs.Reset()
				var r responses.Response
				if stream {
					r = gatewaytest.StreamResponse(t, a, responses.ResponseNewParams{Model: "mock-echo", Input: text(huge)}).Final
				} else if r0, err := a.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text(huge)}); err != nil {
					t.Fatal(err)
				} else {
					r = *r0
				}
				if r.OutputText() != huge {
					t.Fatalf("stream %v: the answer was cut (%d bytes)", stream, len(r.OutputText()))
				}
				_, err := bc.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
				if !stream && stored(t, r.RawJSON()) {
					t.Errorf("a response too large to keep says store: true")
				}
				if status(err) != http.StatusNotFound {
					t.Errorf("stream %v: GET on b of a response too large to keep: %v", stream, err)
				}
				lines := logs.WaitLines(t, "response_store", 1)
				if len(lines) == 0 || !strings.Contains(fmt.Sprint(lines[0]["error"]), "too large") {
					t.Errorf("stream %v: logged %v", stream, lines)
				}
			}
		})
	}
}

// TestUnreachableStore: a store that accepts connections and never answers costs a request
// its timeout and no more, and says so: previous_response_id, GET and DELETE 503
// response_store_unavailable, a new response answered with store: false. Each call returns
// (a client timeout of minutes catches a hang).
func TestUnreachableStore(t *testing.T) {
	hole := loopback.Blackhole(t)
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) responsestore.Store
	}{
		{"dynamodb", func(*testing.T) responsestore.Store {
			db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + hole), RetryMaxAttempts: 1,
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
			return dynamostore.New(db, "fngate-responses", dynamostore.Options{Timeout: 300 * time.Millisecond})
		}},
		{"firestore", func(t *testing.T) responsestore.Store {
			t.Setenv("FIRESTORE_EMULATOR_HOST", hole)
			client, err := firestore.NewClient(context.Background(), "fngate-test")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { client.Close() })
			return firestorestore.New(client, "responses", firestorestore.Options{Timeout: 300 * time.Millisecond})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs gatewaytest.LogBuffer
			reg := providers.Registry{}
			mock.Register(reg)
			g := gatewaytest.Serve(t, gatewaytest.Config(t, catalog, config.Options{}), gateway.Options{Registry: reg, Logger: logs.Logger(), ResponseStore: tc.store(t)})
			cl := client(g, appKey)
			ctx := context.Background()

			r, err := cl.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("hello")})
			if err != nil || r.OutputText() != "hello" || stored(t, r.RawJSON()) {
				t.Errorf("a new response: %v %s", err, r.RawJSON())
			}
			_, err = cl.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String("resp_x"), Input: text("x")})
			unavailable := func(what string, err error) {
				t.Helper()
				if e := apiError(err); e == nil || e.StatusCode != http.StatusServiceUnavailable || e.Code != "response_store_unavailable" {
					t.Errorf("%s: %v", what, err)
				}
			}
			unavailable("previous_response_id", err)
			_, err = cl.Responses.Get(ctx, "resp_x", responses.ResponseGetParams{})
			unavailable("GET", err)
			unavailable("DELETE", cl.Responses.Delete(ctx, "resp_x"))
			if n := len(logs.Lines(t, "response_store")); n != 4 {
				t.Errorf("%d response_store lines logged, want 4 (write, read, read, read):\n%s", n, logs.String())
			}
		})
	}
}

// sharedMaxBody is the cloud stores' limit in these tests: the stores' own MaxBodyBytes (8 MiB)
// is what their packages test; crossing it here would send tens of megabytes through
// emulators under the race detector, minutes of a CI run for the same code path.
const sharedMaxBody = 3 << 19
