package gateway_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

var chatDoor = &cacheDoors[0]

// cacheResult is the x-fngate-cache a request gets.
func cacheResult(r *gatewaytest.Response) string { return r.Header.Get(gateway.HeaderCache) }

// TestCacheControl: no-cache answers fresh and caches the answer anew; no-store neither reads
// nor writes; a model that caches nothing says nothing.
func TestCacheControl(t *testing.T) {
	onEveryCacheStore(t, func(t *testing.T, _ cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store) {
		cacheControlOn(t, open(t, time.Now))
	})
}

func cacheControlOn(t *testing.T, stores [2]responsecache.Store) {
	u := newCacheUpstreams(t)
	gw := cacheInstances(t, cacheConfig(u, ""), stores, gateway.Options{})
	chatDoor.do(t, gw[0], cacheKeyA, false)
	flush(t, gw[0])
	steps := []struct {
		header []string
		want   string
		calls  int // upstream calls it makes
	}{
		{nil, "hit", 0},
		{[]string{"Cache-Control", "no-cache"}, "miss", 1},
		{[]string{"Cache-Control", "max-age=0, No-Store"}, "bypass", 1},
		{nil, "hit", 0},
	}
	for i, s := range steps {
		before := u.calls()
		r := chatDoor.do(t, gw[1], cacheKeyA, false, s.header...)
		flush(t, gw[1])
		if got := cacheResult(r); got != s.want || u.calls()-before != s.calls {
			t.Errorf("step %d (%v): %q with %d upstream calls, want %q with %d", i, s.header, got, u.calls()-before, s.want, s.calls)
		}
	}
	r := gw[0].Chat(t, `{"model":"uncached","messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer "+cacheKeyA)
	if got := cacheResult(r); got != "" {
		t.Errorf("a model without cache: %s %q", gateway.HeaderCache, got)
	}
}

// TestCacheExpiry: an entry is served until its TTL has passed on the store's clock, then the
// request is a miss, although the store still holds it (the cloud stores' TTL is late).
func TestCacheExpiry(t *testing.T) {
	onEveryCacheStore(t, func(t *testing.T, _ cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store) {
		clock := &fakeClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
		cacheExpiryOn(t, clock, open(t, clock.now))
	})
}

func cacheExpiryOn(t *testing.T, clock *fakeClock, stores [2]responsecache.Store) {
	u := newCacheUpstreams(t)
	gw := cacheInstances(t, cacheConfig(u, ""), stores, gateway.Options{Now: clock.now})
	chatDoor.do(t, gw[0], cacheKeyA, true)
	flush(t, gw[0])
	for _, step := range []struct {
		after time.Duration
		want  string
	}{{59 * time.Minute, "hit"}, {61 * time.Minute, "miss"}} {
		clock.set(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC).Add(step.after))
		if got := cacheResult(chatDoor.do(t, gw[1], cacheKeyA, true)); got != step.want {
			t.Errorf("%v after the miss: %q, want %q", step.after, got, step.want)
		}
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// TestCacheScopes: under scope key no key sees another's entry; team shares within a team
// (a key without one keeps its own); global shares with every key.
func TestCacheScopes(t *testing.T) {
	onEveryCacheStore(t, cacheScopesOn)
}

func cacheScopesOn(t *testing.T, _ cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store) {
	for _, tc := range []struct {
		scope string
		b, c  string // what keys b (a's team) and c (no team) get after a's miss
	}{
		{"", "miss", "miss"},
		{", scope: key", "miss", "miss"},
		{", scope: team", "hit", "miss"},
		{", scope: global", "hit", "hit"},
	} {
		t.Run(strings.TrimPrefix(tc.scope, ", scope: "), func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			gw := cacheInstances(t, cacheConfig(u, tc.scope), open(t, time.Now), gateway.Options{})
			chatDoor.do(t, gw[0], cacheKeyA, false)
			flush(t, gw[0])
			// c first: its miss, if any, must not become b's hit.
			gotC := cacheResult(chatDoor.do(t, gw[1], cacheKeyC, false, "Cache-Control", "no-store"))
			if tc.c == "miss" && gotC != "bypass" || tc.c == "hit" && gotC != "bypass" {
				t.Fatalf("c with no-store: %q", gotC)
			}
			if got := cacheResult(chatDoor.do(t, gw[1], cacheKeyB, false)); got != tc.b {
				t.Errorf("key b: %q, want %q", got, tc.b)
			}
			if got := cacheResult(chatDoor.do(t, gw[1], cacheKeyC, false)); got != tc.c {
				t.Errorf("key c: %q, want %q", got, tc.c)
			}
		})
	}
}

// TestCacheSkipsWhatItMustNot: an answer larger than the store holds, a stream cut short, an
// answer cut by max_tokens and a failed one are never cached; a Responses request that
// continues a stored one is served past the cache.
func TestCacheSkipsWhatItMustNot(t *testing.T) {
	onEveryCacheStore(t, cacheSkipsOn)
}

func cacheSkipsOn(t *testing.T, _ cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store) {
	// Random text does not compress below any store's item, whatever its limit (1 MiB at
	// most: Firestore's document) and its compression.
	raw := make([]byte, 1200<<10)
	_, _ = rand.Read(raw)
	big := base64.StdEncoding.EncodeToString(raw)
	for _, tc := range []struct {
		name   string
		reply  openaifake.Reply
		stream bool
		skip   string // the cache_skipped reason logged, if one is
	}{
		{name: "too large", reply: openaifake.Reply{Text: big}, skip: "too_large"},
		{name: "cut stream", reply: openaifake.Reply{Text: "two three five seven", CutAfter: 2}, stream: true},
		{name: "max tokens", reply: openaifake.Reply{Text: "two three", FinishReason: "length"}},
		{name: "max tokens stream", reply: openaifake.Reply{Text: "two three", FinishReason: "length"}, stream: true},
		{name: "error event", reply: openaifake.Reply{Text: "two three five", ErrorEventAfter: 2}, stream: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			u.oa.Script = nil
			u.oa.Default = tc.reply
			logs := &gatewaytest.LogBuffer{}
			gw := cacheInstances(t, cacheConfig(u, ""), open(t, time.Now), gateway.Options{Logger: logs.Logger()})
			gw[0].Do(t, "POST", chatDoor.path, chatDoor.body("gpt", tc.stream), "Authorization", "Bearer "+cacheKeyA)
			flush(t, gw[0])
			before := u.calls()
			r := gw[1].Do(t, "POST", chatDoor.path, chatDoor.body("gpt", tc.stream), "Authorization", "Bearer "+cacheKeyA)
			if got := cacheResult(r); got != "miss" || u.calls() != before+1 {
				t.Errorf("the second request: %q with %d upstream calls, want a miss", got, u.calls()-before)
			}
			skipped := logs.Lines(t, "cache_skipped")
			switch {
			case tc.skip == "" && len(skipped) > 0:
				t.Errorf("cache_skipped logged: %v", skipped)
			case tc.skip != "" && (len(skipped) == 0 || skipped[0]["reason"] != tc.skip):
				t.Errorf("cache_skipped lines %v, want reason %s", skipped, tc.skip)
			}
		})
	}
	t.Run("previous_response_id", func(t *testing.T) {
		u := newCacheUpstreams(t)
		gw := cacheInstances(t, cacheConfig(u, ""), open(t, time.Now), gateway.Options{ResponseStore: responsestore.NewMemory()})
		first := gw[0].Do(t, "POST", "/v1/responses", `{"model":"gpt","input":"Name three primes."}`, "Authorization", "Bearer "+cacheKeyA)
		id, _ := first.JSON(t)["id"].(string)
		body := fmt.Sprintf(`{"model":"gpt","previous_response_id":%q,"input":"And two more."}`, id)
		for i := range 2 {
			r := gw[0].Do(t, "POST", "/v1/responses", body, "Authorization", "Bearer "+cacheKeyA)
			flush(t, gw[0])
			if got := cacheResult(r); r.Status != 200 || got != "bypass" {
				t.Errorf("continued request %d: %d %q, want 200 bypass", i, r.Status, got)
			}
		}
	})
}

// TestCacheHitIsStoredAsANewResponse: a hit on a store: true Responses request is a response
// of its own, which previous_response_id continues and GET finds.
func TestCacheHitIsStoredAsANewResponse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			u := newCacheUpstreams(t)
			store := responsestore.NewMemory()
			gw := cacheInstances(t, cacheConfig(u, ""), memoryCache(), gateway.Options{ResponseStore: store})
			body := fmt.Sprintf(`{"model":"claude","stream":%v,"max_output_tokens":64,"input":"Name three primes."}`, stream)
			auth := []string{"Authorization", "Bearer " + cacheKeyA}
			gw[0].Do(t, "POST", "/v1/responses", body, auth...)
			flush(t, gw[0])
			hit := gw[1].Do(t, "POST", "/v1/responses", body, auth...)
			if cacheResult(hit) != "hit" {
				t.Fatalf("%q, want a hit", cacheResult(hit))
			}
			id := responseID(t, hit.Body)
			got := gw[0].Do(t, "GET", "/v1/responses/"+id, "", auth...)
			if got.Status != 200 || !strings.Contains(string(got.Body), `"store":true`) {
				t.Errorf("GET the hit's response %s: %d %s", id, got.Status, got.Body)
			}
			next := gw[0].Do(t, "POST", "/v1/responses", fmt.Sprintf(`{"model":"claude","max_output_tokens":64,"previous_response_id":%q,"input":"More."}`, id), auth...)
			if next.Status != 200 {
				t.Errorf("continuing the hit's response: %d %s", next.Status, next.Body)
			}
		})
	}
}

// responseID is the id of a Responses answer, whole or streamed.
func responseID(t *testing.T, body []byte) string {
	t.Helper()
	s := string(body)
	i := strings.Index(s, `"id":"resp_`)
	if i < 0 {
		t.Fatalf("no response id in %s", body)
	}
	s = s[i+len(`"id":"`):]
	return s[:strings.IndexByte(s, '"')]
}

// TestCacheHitCostsNothing: a hit is counted against the rate limit's requests, logged as
// outcome cache_hit with the tokens it saved, and charges no budget; a key already past its
// budget is refused before the cache.
func TestCacheHitCostsNothing(t *testing.T) {
	onEveryCacheStore(t, func(t *testing.T, _ cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store) {
		cacheHitCostsNothingOn(t, open(t, time.Now))
	})
}

func cacheHitCostsNothingOn(t *testing.T, stores [2]responsecache.Store) {
	u := newCacheUpstreams(t)
	counts := counters.NewMemory()
	logs := &gatewaytest.LogBuffer{}
	yaml := strings.Replace(cacheConfig(u, ""), "{name: a, value: "+cacheKeyA+", team: red}",
		"{name: a, value: "+cacheKeyA+", team: red, rate: {requests_per_minute: 100}, budget: {usd_per_day: 1}}", 1)
	yaml = strings.Replace(yaml, "gpt: {cache:", "gpt: {price: {input_per_mtok: 1000, output_per_mtok: 1000}, max_output_tokens: 64, cache:", 1)
	gw := cacheInstances(t, yaml, stores, gateway.Options{Counters: counts, Logger: logs.Logger()})
	spend := func() int64 {
		c, err := counts.Read(context.Background(), "a", counters.At(time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		return c.Value("", counters.SpendDay)
	}
	requests := func() int64 {
		c, _ := counts.Read(context.Background(), "a", counters.At(time.Now()))
		return c.Value("", counters.Requests)
	}
	priced := &cacheDoor{path: chatDoor.path, model: "gpt", body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"max_completion_tokens":64,"messages":[{"role":"user","content":"Name three primes."}]}`, m, stream)
	}}
	priced.do(t, gw[0], cacheKeyA, false)
	flush(t, gw[0])
	afterMiss := spend()
	if afterMiss <= 0 {
		t.Fatalf("the miss charged %d nano-USD", afterMiss)
	}
	for _, stream := range []bool{false, true} {
		if r := priced.do(t, gw[1], cacheKeyA, stream); cacheResult(r) != "hit" {
			t.Fatalf("%q, want a hit", cacheResult(r))
		}
	}
	if got := spend(); got != afterMiss {
		t.Errorf("two hits moved the day's spend from %d to %d nano-USD", afterMiss, got)
	}
	if got := requests(); got != 3 {
		t.Errorf("requests counted %d, want 3 (hits count against the rate limit)", got)
	}
	attempts := logs.Lines(t, "attempt")
	var hits int
	for _, a := range attempts {
		if a["outcome"] != "cache_hit" {
			continue
		}
		hits++
		saved, _ := a["saved"].(map[string]any)
		if saved["prompt_tokens"] == nil || saved["completion_tokens"] == nil || a["cost_usd"] != nil {
			t.Errorf("a hit's attempt line: %v", a)
		}
	}
	if hits != 2 {
		t.Errorf("%d attempt lines with outcome cache_hit, want 2", hits)
	}
	for _, r := range logs.Lines(t, "request") {
		if r["cache"] == "hit" && (r["cost_usd"] != nil || r["saved"] == nil) {
			t.Errorf("a hit's request line: %v", r)
		}
		// The look-up's time is on every line that looked up, hit or miss: what the store
		// adds to a request.
		if ms, ok := r["cache_lookup_ms"].(float64); (r["cache"] == "hit" || r["cache"] == "miss") && (!ok || ms <= 0) {
			t.Errorf("a request line that looked the cache up has no cache_lookup_ms: %v", r)
		}
	}
	// Past the budget, the cache does not serve either.
	if err := counts.Add(context.Background(), "a", counters.At(time.Now()), []counters.Amount{{Counter: counters.Counter{Kind: counters.SpendDay}, N: 2e9}}); err != nil {
		t.Fatal(err)
	}
	r := gw[1].Chat(t, priced.body("gpt", false), "Authorization", "Bearer "+cacheKeyA)
	if r.Status != 429 || cacheResult(r) != "" {
		t.Errorf("a key past its budget: %d %q %s", r.Status, cacheResult(r), r.Body)
	}
}

// failingCache is a store that cannot be reached.
type failingCache struct{}

var errCacheDown = errors.New("the cache store is down")

func (f *failingCache) Get(context.Context, string) (*responsecache.Entry, error) {
	return nil, errCacheDown
}

func (f *failingCache) Put(context.Context, *responsecache.Entry) error { return errCacheDown }

// TestCacheStoreDown: requests are served as misses, each failed call logged.
func TestCacheStoreDown(t *testing.T) {
	for _, st := range cacheStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			down := st.down(t)
			cacheStoreDownOn(t, [2]responsecache.Store{down, down})
		})
	}
}

func cacheStoreDownOn(t *testing.T, stores [2]responsecache.Store) {
	u := newCacheUpstreams(t)
	logs := &gatewaytest.LogBuffer{}
	gw := cacheInstances(t, cacheConfig(u, ""), stores, gateway.Options{Logger: logs.Logger(), Metrics: io.Discard})
	for _, stream := range []bool{false, true} {
		r := chatDoor.do(t, gw[0], cacheKeyA, stream)
		flush(t, gw[0])
		if got := cacheResult(r); got != "miss" {
			t.Errorf("stream=%v: %q, want miss", stream, got)
		}
	}
	ops := map[any]int{}
	for _, l := range logs.Lines(t, "cache_error") {
		ops[l["op"]]++
		if l["error"] == nil || l["error"] == "" {
			t.Errorf("cache_error line: %v", l)
		}
	}
	if ops["read"] != 2 || ops["write"] != 2 {
		t.Errorf("cache_error lines by op: %v, want 2 reads and 2 writes", ops)
	}
}

// TestCacheHitIsANewAnswer: a hit's times are its own, on routes where the gateway writes the
// answer and on the Responses door's OpenAI route, where it replays OpenAI's own object.
func TestCacheHitIsANewAnswer(t *testing.T) {
	for _, d := range []*cacheDoor{chatDoor, &cacheDoors[5], &cacheDoors[6]} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", d.name, stream), func(t *testing.T) {
				start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
				clock := &fakeClock{t: start}
				m := responsecache.NewMemory()
				m.Now = clock.now
				u := newCacheUpstreams(t)
				gw := cacheInstances(t, cacheConfig(u, ""), [2]responsecache.Store{m, m}, gateway.Options{Now: clock.now})
				d.do(t, gw[0], cacheKeyA, stream)
				flush(t, gw[0])
				later := start.Add(30 * time.Minute)
				clock.set(later)
				hit := d.do(t, gw[1], cacheKeyA, stream)
				if cacheResult(hit) != "hit" {
					t.Fatalf("%q, want a hit", cacheResult(hit))
				}
				want := fmt.Sprint(later.Unix())
				for _, name := range []string{`"created":`, `"created_at":`, `"completed_at":`} {
					for _, v := range valuesAfter(string(hit.Body), name) {
						if v != want && v != "null" {
							t.Errorf("%s%s in the hit, want %s", name, v, want)
						}
					}
				}
			})
		}
	}
}

// valuesAfter returns what follows each name in body, up to the next comma or brace.
func valuesAfter(body, name string) []string {
	var out []string
	for {
		i := strings.Index(body, name)
		if i < 0 {
			return out
		}
		body = body[i+len(name):]
		out = append(out, body[:strings.IndexAny(body, ",}")])
	}
}

// hangingCache is a store that neither answers nor refuses: each call blocks until its
// context ends, as a store behind a black-holed network does. It records each call.
type hangingCache struct {
	mu    sync.Mutex
	calls []hungCall
}

type hungCall struct {
	op         string
	start, end time.Time
	budget     time.Duration // the context's deadline after start; 0: none
}

func (h *hangingCache) hang(ctx context.Context, op string) error {
	c := hungCall{op: op, start: time.Now()}
	if dl, ok := ctx.Deadline(); ok {
		c.budget = dl.Sub(c.start)
	}
	<-ctx.Done()
	c.end = time.Now()
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	return fmt.Errorf("the cache store did not answer: %w", ctx.Err())
}

func (h *hangingCache) Get(ctx context.Context, _ string) (*responsecache.Entry, error) {
	return nil, h.hang(ctx, "get")
}

func (h *hangingCache) Put(ctx context.Context, _ *responsecache.Entry) error {
	return h.hang(ctx, "put")
}

// returned are the calls of op that have returned.
func (h *hangingCache) returned(op string) []hungCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hungCall
	for _, c := range h.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

// TestCacheStoreThatHangs: a store that never answers costs a request its look-up's
// response_cache.timeout and no more: the request is served as a miss within that timeout
// plus the upstream's time, the read logged as a cache_error, and the write, which hangs as
// long, runs after the client has its answer (none has returned when the answer is read)
// and is logged in turn.
func TestCacheStoreThatHangs(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		door   *cacheDoor
		stream bool
	}{{chatDoor, false}, {chatDoor, true}, {&cacheDoors[3], false}, {&cacheDoors[3], true}} {
		t.Run(fmt.Sprintf("%s/stream=%v", tc.door.name, tc.stream), func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			logs := &gatewaytest.LogBuffer{}
			store := &hangingCache{}
			yaml := strings.Replace(cacheConfig(u, ""), "response_cache: {timeout: 20s}", fmt.Sprintf("response_cache: {timeout: %v}", timeout), 1)
			gw := cacheInstances(t, yaml, [2]responsecache.Store{store, store}, gateway.Options{Logger: logs.Logger(), Metrics: io.Discard})
			// The upstream's own time: the same request's on a model without a cache.
			uncached := *tc.door
			uncached.model = "uncached"
			if tc.door.model == "claude" {
				uncached.model = "claude-uncached"
			}
			start := time.Now()
			uncached.do(t, gw[0], cacheKeyA, tc.stream)
			upstream := time.Since(start)

			start = time.Now()
			r := tc.door.do(t, gw[0], cacheKeyA, tc.stream)
			answered := time.Now()
			took := answered.Sub(start)
			putsBefore := len(store.returned("put"))
			if got := cacheResult(r); got != "miss" || answerText(t, tc.stream, r.Body) == "" {
				t.Errorf("%s %q, body %s: want a miss with its answer", gateway.HeaderCache, got, r.Body)
			}
			gets := store.returned("get")
			if len(gets) != 1 || gets[0].budget <= 0 || gets[0].budget > timeout {
				t.Fatalf("look-ups %+v: want one under a deadline of at most %v", gets, timeout)
			}
			// The slack is the machine's, under the race detector; a look-up without its
			// bound would hang until the client gave up.
			if limit := timeout + upstream + time.Second; took < timeout || took > limit {
				t.Errorf("served in %v, want between the cache timeout %v and %v (timeout + upstream %v + slack)", took, timeout, limit, upstream)
			}
			if putsBefore != 0 {
				t.Errorf("%d writes had returned when the client had its answer: the write delayed it", putsBefore)
			}
			flush(t, gw[0])
			if puts := store.returned("put"); len(puts) != 1 || puts[0].budget <= 0 || puts[0].budget > timeout || !puts[0].end.After(answered) {
				t.Errorf("writes %+v: want one, under a deadline of at most %v, ending after the answer", puts, timeout)
			}
			ops := map[any]int{}
			for _, l := range logs.Lines(t, "cache_error") {
				ops[l["op"]]++
			}
			if ops["read"] != 1 || ops["write"] != 1 {
				t.Errorf("cache_error lines by op: %v, want a read and a write", ops)
			}
		})
	}
}
