package sharedlimits

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

	"cloud.google.com/go/firestore"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const appKey = "key-shared-limits-1"

// backend opens fresh stores of one kind; atomic says whether it admits exactly to a limit
// under concurrency (see counterstest.Options).
type backend struct {
	name   string
	atomic bool
	open   func(t *testing.T) func(t *testing.T) counters.Store
}

var backends = []backend{
	{"memory", true, func(*testing.T) func(*testing.T) counters.Store {
		return func(*testing.T) counters.Store { return counters.NewMemory() }
	}},
	{"file", true, func(*testing.T) func(*testing.T) counters.Store {
		return func(t *testing.T) counters.Store {
			// Each instance opens the file itself, as each process does.
			return &perInstanceFile{path: filepath.Join(t.TempDir(), "counters.json")}
		}
	}},
	{"dynamodb", true, func(t *testing.T) func(*testing.T) counters.Store {
		db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(emulator.Moto(t)),
			Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		var n atomic.Int64
		return func(t *testing.T) counters.Store {
			table := fmt.Sprintf("fngate-shared-%d-%d", time.Now().UnixNano(), n.Add(1))
			if err := dynamocounters.CreateTable(context.Background(), db, table); err != nil {
				t.Fatal(err)
			}
			return &perInstance{open: func() counters.Store { return dynamocounters.New(db, table) }}
		}
	}},
	{"firestore", false, func(t *testing.T) func(*testing.T) counters.Store {
		t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
		client, err := firestore.NewClient(context.Background(), "fngate-test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		var n atomic.Int64
		return func(*testing.T) counters.Store {
			prefix := fmt.Sprintf("shared%d_%d_", time.Now().UnixNano(), n.Add(1))
			return &perInstance{open: func() counters.Store { return firestorecounters.New(client, prefix, 4) }}
		}
	}},
}

// perInstance gives each gateway instance a store value of its own on the shared backend, as
// each function instance has its own client: nothing an instance remembers is shared.
type perInstance struct {
	counters.Store // the first instance's, for the test's own reads
	open           func() counters.Store
}

func (p *perInstance) instance() counters.Store {
	s := p.open()
	if p.Store == nil {
		p.Store = s
	}
	return s
}

type perInstanceFile struct {
	counters.Store
	path string
}

func (p *perInstanceFile) instance() counters.Store {
	s, err := counters.OpenFile(p.path)
	if err != nil {
		panic(err)
	}
	if p.Store == nil {
		p.Store = s
	}
	return s
}

type instanced interface {
	counters.Store
	instance() counters.Store
}

func instanceOf(s counters.Store) counters.Store {
	if i, ok := s.(instanced); ok {
		return i.instance()
	}
	return s
}

// clock is the test's time; each instance reads it with its own skew.
type clock struct{ ns atomic.Int64 }

func (c *clock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *clock) now(skew time.Duration) time.Time {
	return time.Unix(0, c.ns.Load()).Add(skew).UTC()
}

// settled reports each settlement of the instance it wraps.
type settled struct {
	counters.Store
	done chan struct{}
}

func (s *settled) Add(ctx context.Context, key string, w counters.Windows, a []counters.Amount) error {
	defer func() { s.done <- struct{}{} }()
	return s.Store.Add(ctx, key, w, a)
}

type instance struct {
	*gatewaytest.Server
	settled chan struct{}
}

// serve starts one gateway instance on the shared store, reading c with skew.
func serve(t *testing.T, yaml string, store counters.Store, c *clock, skew time.Duration) *instance {
	t.Helper()
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
	reg := providers.Registry{}
	mock.Register(reg)
	s := &settled{Store: instanceOf(store), done: make(chan struct{}, 1000)}
	srv := gatewaytest.Serve(t, cfg, gateway.Options{
		Registry: reg, Counters: s, Now: func() time.Time { return c.now(skew) },
		Logger: telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil), Metrics: io.Discard,
	})
	return &instance{Server: srv, settled: s.done}
}

func (in *instance) chat(t *testing.T, body string) *gatewaytest.Response {
	t.Helper()
	return in.Chat(t, body, "Authorization", "Bearer "+appKey)
}

func (in *instance) waitSettled(t *testing.T) {
	t.Helper()
	select {
	case <-in.settled:
	case <-time.After(10 * time.Second):
		t.Fatal("the request was never settled")
	}
}

const hello = `{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"hello"}]}`

// limitsConfig gives the emulators time under load, and refuses rather than serves a request
// whose counter call failed, so a failure shows as a 503 instead of an uncounted 200.
func limitsConfig(limits string) string {
	return `
counters: {timeout: 20s, on_store_error: closed}
keys: [{name: app, value: ` + appKey + `, ` + limits + `}]
connections: {mock: {kind: mock}}
models:
  m: {routes: [{connection: mock, model: echo}]}
  priced:
    price: {input_per_mtok: 1000, output_per_mtok: 1000}
    routes: [{connection: mock, model: lorem}]
`
}

func TestSharedLimits(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			open := b.open(t)
			t.Run("instances hammered at once admit the limit", func(t *testing.T) { hammer(t, open(t), b.atomic) })
			t.Run("clocks that disagree share the newest window", func(t *testing.T) { skew(t, open(t)) })
			t.Run("windows roll over", func(t *testing.T) { rollOver(t, open(t)) })
			t.Run("a budget crossed mid-stream refuses the next request elsewhere", func(t *testing.T) { crossedMidStream(t, open(t)) })
		})
	}
}

// hammer: three instances, eight clients each, all at once, on a limit of 10 a minute. An
// atomic store admits exactly 10; Firestore's read-then-write at most one more per request in
// flight at the crossing (the 24 clients).
func hammer(t *testing.T, store counters.Store, atomicStore bool) {
	const instances, clients, each, limit = 3, 8, 4, 10
	var c clock
	c.set(time.Date(2026, 11, 29, 12, 0, 10, 0, time.UTC))
	yaml := limitsConfig(fmt.Sprintf("rate: {requests_per_minute: %d}", limit))
	var gws []*instance
	for i := range instances {
		gws = append(gws, serve(t, yaml, store, &c, time.Duration(i)*time.Second))
	}
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, g := range gws {
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range each {
					req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(hello))
					req.Header.Set("Authorization", "Bearer "+appKey)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch resp.StatusCode {
					case 200:
						ok.Add(1)
					case 429:
						refused.Add(1)
					default:
						t.Errorf("status %d", resp.StatusCode)
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	n, inFlight := ok.Load(), int64(instances*clients)
	bound := int64(limit)
	if !atomicStore {
		bound += inFlight
	}
	t.Logf("%d of %d requests admitted on a limit of %d (bound %d)", n, ok.Load()+refused.Load(), limit, bound)
	if n < limit || n > bound {
		t.Fatalf("%d requests admitted across %d instances on a limit of %d; want %d to %d", n, instances, limit, limit, bound)
	}
	got, err := store.Read(context.Background(), "app", counters.At(c.now(0)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Value("", counters.Requests) != n {
		t.Fatalf("the store counts %d requests, %d were admitted", got.Value("", counters.Requests), n)
	}
}

// skew: instance B's clock is 7 s behind A's. Once A has begun a minute, B's requests count in
// it too, so the minute's limit holds for both; B never reopens the minute before.
func skew(t *testing.T, store counters.Store) {
	var c clock
	c.set(time.Date(2026, 11, 29, 12, 0, 58, 0, time.UTC))
	yaml := limitsConfig("rate: {requests_per_minute: 3}")
	a, b := serve(t, yaml, store, &c, 0), serve(t, yaml, store, &c, -7*time.Second)
	want := func(g *instance, name string, status int) *gatewaytest.Response {
		t.Helper()
		r := g.chat(t, hello)
		if r.Status != status {
			t.Fatalf("%s at %v: %d, want %d: %s", name, c.now(0), r.Status, status, r.Body)
		}
		return r
	}
	want(a, "A", 200)
	want(b, "B", 200)
	c.advance(5 * time.Second) // A: 12:01:03, B: 12:00:56
	want(a, "A in the new minute", 200)
	want(a, "A in the new minute", 200)
	// B's clock is still in 12:00, where 2 requests were counted; the minute A began has 2.
	r := want(b, "B, behind", 200)
	if r.Header.Get(gateway.HeaderRemainingRequests) != "0" {
		t.Errorf("B was counted in the old minute: %s = %s", gateway.HeaderRemainingRequests, r.Header.Get(gateway.HeaderRemainingRequests))
	}
	want(b, "B, behind, past the limit", 429)
	want(a, "A, past the limit B helped fill", 429)
	got, err := store.Read(context.Background(), "app", counters.At(c.now(-7*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Windows.Minute != counters.At(c.now(0)).Minute || got.Value("", counters.Requests) != 3 {
		t.Fatalf("the store holds %+v; want 3 requests in A's minute", got)
	}
}

// rollOver: a minute's requests and a day's budget each start again with their window, and
// not before.
func rollOver(t *testing.T, store counters.Store) {
	var c clock
	c.set(time.Date(2026, 11, 30, 23, 57, 59, 500_000_000, time.UTC))
	g := serve(t, limitsConfig("rate: {requests_per_minute: 1}, budget: {usd_per_day: 0.02}"), store, &c, 0)
	if r := g.chat(t, hello); r.Status != 200 {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	r := g.chat(t, hello)
	if r.Status != 429 || r.Header.Get("Retry-After") != "1" || r.Header.Get(gateway.HeaderResetRequests) != "500ms" {
		t.Fatalf("second in the minute: %d, Retry-After %q, reset %q", r.Status, r.Header.Get("Retry-After"), r.Header.Get(gateway.HeaderResetRequests))
	}
	// The next minute, on the priced model: 1 input and 30 output tokens at $0.001, $0.031
	// on a $0.02 budget.
	c.advance(500 * time.Millisecond)
	priced := `{"model":"priced","max_completion_tokens":30,"messages":[{"role":"user","content":"go"}]}`
	if r := g.chat(t, priced); r.Status != 200 {
		t.Fatalf("a new minute: %d %s", r.Status, r.Body)
	}
	g.waitSettled(t)
	c.advance(time.Minute) // 23:59: the rate has room, the day's budget not
	if r := g.chat(t, priced); r.Status != 429 || r.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("the day's budget spent: %d %s", r.Status, r.Body)
	}
	c.advance(time.Minute) // December 1st: a new day and a new month
	if r := g.chat(t, priced); r.Status != 200 {
		t.Fatalf("a new day: %d %s", r.Status, r.Body)
	}
	g.waitSettled(t)
	got, err := store.Read(context.Background(), "app", counters.At(c.now(0)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Value("", counters.SpendDay) != 31_000_000 || got.Value("", counters.SpendMonth) != 31_000_000 {
		t.Fatalf("after the day and the month rolled: %v; want the new day's and the new month's $0.031", got.Values)
	}
}

// crossedMidStream: a stream on A, admitted under the budget, spends past it and runs to its
// end; the next request, on B, is refused.
func crossedMidStream(t *testing.T, store counters.Store) {
	var c clock
	c.set(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	yaml := limitsConfig("budget: {usd_per_month: 0.01}")
	a, b := serve(t, yaml, store, &c, 0), serve(t, yaml, store, &c, 0)
	r := a.chat(t, `{"model":"priced","stream":true,"max_completion_tokens":40,"messages":[{"role":"user","content":"go"}]}`)
	data := gatewaytest.SSEData(t, r.Body)
	if r.Status != 200 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("the stream that crossed the budget: %d, last event %q", r.Status, data[len(data)-1])
	}
	a.waitSettled(t)
	r = b.chat(t, `{"model":"priced","max_completion_tokens":5,"messages":[{"role":"user","content":"go"}]}`)
	if r.Status != 429 || r.ErrorObject(t)["code"] != "budget_exceeded" {
		t.Fatalf("the next request on another instance: %d %s", r.Status, r.Body)
	}
}
