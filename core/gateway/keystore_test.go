package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// Keys issued at runtime: a gateway with Options.KeyStore serves the store's keys beside the
// config's, through a cache each instance keeps current.

// sharedKeyStores are the stores the cross-instance tests run on: each row opens one store
// and returns two handles on it, which the test hands to two gateways as two instances open
// their platform's store (keystore_shared_test.go): the memory store (one value twice), the
// file store (two on one file), DynamoDB on moto_server and Firestore on its emulator (two
// clients each). A row whose emulator is absent skips.
var sharedKeyStores = []struct {
	name string
	open func(t *testing.T) (one, two keystore.Store)
}{
	{"memory", func(*testing.T) (keystore.Store, keystore.Store) { s := keystore.NewMemory(); return s, s }},
	{"file", openFileKeys},
	{"dynamodb", openDynamoKeys},
	{"firestore", openFirestoreKeys},
}

// keysStart is where the key tests' clock starts: half a minute into a minute, so a rate
// window lasts 30 s more.
var keysStart = time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)

// freshFor is the revocation bound the gateway promises (keysFreshFor): a test that moves
// the clock this far past a change sees it on every instance.
const freshFor = 5*time.Second + time.Millisecond

// keyClock is a clock the test moves by hand, shared by the gateways of one test and the
// admin writes that stamp keys with their time.
type keyClock struct{ ns atomic.Int64 }

func newKeyClock() *keyClock {
	c := &keyClock{}
	c.ns.Store(keysStart.UnixNano())
	return c
}

func (c *keyClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *keyClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// keyAdmin writes the store as the admin API does: each change a new version, stamped with
// the clock, with its audit entry.
type keyAdmin struct {
	t     *testing.T
	store keystore.Store
	now   func() time.Time
}

// create makes a stored key named name, edited by edit, and returns its secret and id.
func (a keyAdmin) create(name string, edit func(*keystore.Key)) (secret, id string) {
	a.t.Helper()
	secret, hash := keystore.NewSecret()
	suiteSecrets.Store(secret, true) // the suite's scan checks no stored secret is logged or answered either
	now := a.now()
	k := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: name, Hash: hash}, Created: now, CreatedBy: "key:ops", Updated: now, UpdatedBy: "key:ops"}
	if edit != nil {
		edit(k)
	}
	if err := a.store.Create(context.Background(), k, a.entry("key.create", k.ID)); err != nil {
		a.t.Fatalf("create %s: %v", name, err)
	}
	return secret, k.ID
}

// update applies edit to the key id as a new version.
func (a keyAdmin) update(id, action string, edit func(*keystore.Key)) {
	a.t.Helper()
	k, err := a.store.Get(context.Background(), id)
	if err != nil {
		a.t.Fatal(err)
	}
	edit(k)
	k.Version++
	k.Updated, k.UpdatedBy = a.now(), "key:ops"
	if err := a.store.Update(context.Background(), k, a.entry(action, id)); err != nil {
		a.t.Fatalf("%s %s: %v", action, id, err)
	}
}

// rotate gives the key id a new secret and returns it; the old one opens nothing.
func (a keyAdmin) rotate(id string) string {
	secret, hash := keystore.NewSecret()
	suiteSecrets.Store(secret, true)
	a.update(id, "key.rotate", func(k *keystore.Key) { k.Hash = hash })
	return secret
}

func (a keyAdmin) entry(action, target string) *keystore.Entry {
	return &keystore.Entry{ID: keystore.NewEntryID(), Time: a.now(), Actor: "key:ops", Role: keystore.RoleAdmin, Action: action, Target: target}
}

// flakyStore is a store that can be made unreachable, and counts its calls.
type flakyStore struct {
	keystore.Store
	down            atomic.Bool
	byHash, changed atomic.Int64
	byHashStarted   chan struct{} // when not nil, each ByHash reports its start
	byHashMayAnswer chan struct{} // when not nil, each ByHash waits for it
}

// errUnreachable is what an unreachable store answers.
var errUnreachable = errors.New("dial tcp 127.0.0.1:1: connect: connection refused")

func newFlakyStore(s keystore.Store) *flakyStore { return &flakyStore{Store: s} }

func (f *flakyStore) ByHash(ctx context.Context, h [32]byte) (*keystore.Key, error) {
	f.byHash.Add(1)
	if f.byHashStarted != nil {
		f.byHashStarted <- struct{}{}
	}
	if f.byHashMayAnswer != nil {
		<-f.byHashMayAnswer
	}
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.Store.ByHash(ctx, h)
}

func (f *flakyStore) Changed(ctx context.Context, since time.Time) ([]*keystore.Key, bool, error) {
	f.changed.Add(1)
	if f.down.Load() {
		return nil, false, errUnreachable
	}
	return f.Store.Changed(ctx, since)
}

const storedKeysConfig = `
keys:
  - {name: ops, value: sk-config-ops-0123456789}
connections: {mock: {kind: mock}}
models:
  m: {max_output_tokens: 50, routes: [{connection: mock, model: echo}]}
  other: {max_output_tokens: 50, routes: [{connection: mock, model: echo}]}
  e: {kind: embedding, dimensions: 8, routes: [{connection: mock, model: embed}]}
responses: {compaction_keys: [{id: k1, key: "` + compactKeyNew + `"}]}
key_store: {store: memory, stale_for: 1m}
`

const configKey = "sk-config-ops-0123456789"

// storedKeysGateway is one gateway instance over store, on clock.
func storedKeysGateway(t *testing.T, yaml string, store keystore.Store, clock *keyClock, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	g := newGateway(t, yaml, append([]func(*gateway.Options){func(o *gateway.Options) {
		o.KeyStore = store
		o.Now = clock.Now
		o.WebSockets = true
	}}, opts...)...)
	t.Cleanup(g.Gateway.Close)
	return g
}

// keyDoor is one endpoint a key opens, and how it shapes its errors.
type keyDoor struct {
	name, method, path, body string
	header                   []string
	anthropic                bool
}

var keyDoors = []keyDoor{
	{"chat", http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"one two"}]}`, nil, false},
	{"completions", http.MethodPost, "/v1/completions", `{"model":"m","prompt":"one two"}`, nil, false},
	{"messages", http.MethodPost, "/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"one two"}]}`, []string{"Anthropic-Version", "2023-06-01"}, true},
	{"count_tokens", http.MethodPost, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"one two"}]}`, []string{"Anthropic-Version", "2023-06-01"}, true},
	{"responses", http.MethodPost, "/v1/responses", `{"model":"m","input":"one two"}`, nil, false},
	{"compact", http.MethodPost, "/v1/responses/compact", `{"model":"m","input":"one two"}`, nil, false},
	{"embeddings", http.MethodPost, "/v1/embeddings", `{"model":"e","input":"one two"}`, nil, false},
	{"models", http.MethodGet, "/v1/models", "", nil, false},
}

// call sends the door's request with secret; Anthropic's doors take it as x-api-key, as
// their SDKs send it.
func (d keyDoor) call(t *testing.T, g *testGateway, secret string) *gatewaytest.Response {
	t.Helper()
	auth := []string{"Authorization", "Bearer " + secret}
	if d.anthropic {
		auth = []string{"X-Api-Key", secret}
	}
	return g.Do(t, d.method, d.path, d.body, append(auth, d.header...)...)
}

// refusal is a refusal in the door's shape: its status, its type, its code (Anthropic's
// shape has none: ""), and its message.
type refusal struct {
	status             int
	typ, code, message string
}

func (d keyDoor) refusal(t *testing.T, r *gatewaytest.Response) refusal {
	t.Helper()
	m := r.JSON(t)
	if d.anthropic {
		e, _ := m["error"].(map[string]any)
		if m["type"] != "error" || e == nil {
			t.Fatalf("not an Anthropic error: %d %s", r.Status, r.Body)
		}
		return refusal{r.Status, fmt.Sprint(e["type"]), "", fmt.Sprint(e["message"])}
	}
	e := r.ErrorObject(t)
	return refusal{r.Status, fmt.Sprint(e["type"]), fmt.Sprint(e["code"]), fmt.Sprint(e["message"])}
}

// TestStoredKeyOnEveryDoor: on every door (count_tokens, embeddings and the model list
// included) a stored key is served as a config key is; a disabled stored key's secret gets
// exactly the 401 an unknown secret gets, in the door's shape, and is logged with its id;
// with the store unreachable a secret the instance has not cached gets a 503
// key_store_unavailable in the door's shape, while the config's keys never touch the store.
func TestStoredKeyOnEveryDoor(t *testing.T) {
	for _, d := range keyDoors {
		t.Run(d.name, func(t *testing.T) {
			clock := newKeyClock()
			store := newFlakyStore(keystore.NewMemory())
			g := storedKeysGateway(t, storedKeysConfig, store, clock)
			admin := keyAdmin{t, store, clock.Now}
			secret, id := admin.create("team-a", nil)
			off, offID := admin.create("team-off", func(k *keystore.Key) { k.Disabled = true })

			if r := d.call(t, g, secret); r.Status != 200 {
				t.Fatalf("stored key: %d %s", r.Status, r.Body)
			}
			unknown := d.call(t, g, "sk-fngate-not-a-key-of-anyone-0123456789")
			disabled := d.call(t, g, off)
			wantType := "authentication_error"
			for name, r := range map[string]*gatewaytest.Response{"unknown": unknown, "disabled": disabled} {
				got := d.refusal(t, r)
				if got.status != 401 || got.typ != wantType || !d.anthropic && got.code != "invalid_api_key" {
					t.Errorf("%s secret: %+v, want a 401 %s invalid_api_key", name, got, wantType)
				}
			}
			if u, o := d.refusal(t, unknown), d.refusal(t, disabled); u != o {
				t.Errorf("a disabled key is told apart from an unknown one:\n%+v\n%+v", o, u)
			}

			// (That a config key makes no read either: TestAConfigKeyNeverCallsTheKeyStore, without
			// the background reads.)
			before := store.byHash.Load()
			if r := d.call(t, g, configKey); r.Status != 200 {
				t.Fatalf("config key: %d %s", r.Status, r.Body)
			}
			if after := store.byHash.Load(); after != before {
				t.Errorf("a config key's request looked itself up in the key store (%d calls)", after-before)
			}

			store.down.Store(true)
			fresh, _ := admin.create("team-new", nil) // made while this instance cannot ask
			r := d.call(t, g, fresh)
			got := d.refusal(t, r)
			want := refusal{http.StatusServiceUnavailable, "service_unavailable_error", "key_store_unavailable", got.message}
			if d.anthropic {
				want = refusal{529, "overloaded_error", "", got.message} // Anthropic's 503
			}
			if got != want || !strings.Contains(got.message, "key_store_unavailable") || r.Header.Get("Retry-After") == "" {
				t.Errorf("uncached key, store down: %+v (Retry-After %q), want %+v naming key_store_unavailable", got, r.Header.Get("Retry-After"), want)
			}
			if r := d.call(t, g, secret); r.Status != 200 {
				t.Errorf("cached key, store down: %d %s", r.Status, r.Body)
			}
			if r := d.call(t, g, configKey); r.Status != 200 {
				t.Errorf("config key, store down: %d %s", r.Status, r.Body)
			}

			logged := 7
			if d.name == "models" {
				logged = 3 // the model list logs its refusals alone
			}
			lines := g.logs.AfterRequests(t, logged)
			var refused, served []map[string]any
			for _, l := range lines {
				switch l["msg"] {
				case record.MsgKeyRefused:
					refused = append(refused, l)
				case record.MsgRequest:
					if lb, _ := l["labels"].(map[string]any); lb != nil && lb["key"] == "team-a" {
						served = append(served, l)
					}
				}
			}
			if len(refused) != 1 || refused[0]["key_id"] != offID || refused[0]["key"] != "team-off" || refused[0]["reason"] != "disabled" {
				t.Errorf("key_refused lines %v, want one for %s (disabled)", refused, offID)
			}
			if d.name != "models" && (len(served) == 0 || served[0]["labels"].(map[string]any)["key_id"] != id) {
				t.Errorf("the stored key's request lines %v do not carry key_id %s", served, id)
			}
			for _, l := range lines {
				if lb, _ := l["labels"].(map[string]any); lb != nil && lb["key"] == "ops" && lb["key_id"] != nil {
					t.Errorf("a config key's line carries a key_id: %v", l)
				}
			}
		})
	}
}

// TestStoredKeyChangesReachTheOtherInstance: of two instances sharing one store, a key made
// on the store works on both at once, and a key revoked, disabled or rotated (its old
// secret) stops working on the instance that had it cached once keysFreshFor (5 s) has
// passed, with no request in between; an expired key stops at its expiry on both. The
// rotated key's new secret works at once.
func TestStoredKeyChangesReachTheOtherInstance(t *testing.T) {
	type change struct {
		name   string
		reason string
		apply  func(a keyAdmin, id string, clock *keyClock) (newSecret string)
	}
	changes := []change{
		{"deleted", "deleted", func(a keyAdmin, id string, _ *keyClock) string {
			a.update(id, "key.delete", func(k *keystore.Key) { k.Deleted = true })
			return ""
		}},
		{"disabled", "disabled", func(a keyAdmin, id string, _ *keyClock) string {
			a.update(id, "key.disable", func(k *keystore.Key) { k.Disabled = true })
			return ""
		}},
		{"expired", "expired", func(a keyAdmin, id string, clock *keyClock) string {
			at := clock.Now().Add(time.Second)
			a.update(id, "key.update", func(k *keystore.Key) { k.ExpiresAt = &at })
			return ""
		}},
		{"rotated", "rotated", func(a keyAdmin, id string, _ *keyClock) string { return a.rotate(id) }},
	}
	for _, st := range sharedKeyStores {
		for _, ch := range changes {
			t.Run(st.name+"/"+ch.name, func(t *testing.T) {
				clock := newKeyClock()
				store, other := st.open(t)
				one := storedKeysGateway(t, storedKeysConfig, store, clock)
				two := storedKeysGateway(t, storedKeysConfig, other, clock)
				admin := keyAdmin{t, store, clock.Now}
				secret, id := admin.create("team-a", nil)
				chat := keyDoors[0]
				for i, g := range []*testGateway{one, two} {
					if r := chat.call(t, g, secret); r.Status != 200 {
						t.Fatalf("a new key on instance %d: %d %s", i+1, r.Status, r.Body)
					}
				}
				newSecret := ch.apply(admin, id, clock)
				if newSecret != "" {
					if r := chat.call(t, two, newSecret); r.Status != 200 {
						t.Errorf("the rotated key's new secret at once: %d %s", r.Status, r.Body)
					}
				}
				clock.Advance(freshFor)
				for i, g := range []*testGateway{one, two} {
					if r := chat.call(t, g, secret); r.Status != 401 {
						t.Errorf("instance %d, %s 5 s ago: %d %s, want 401", i+1, ch.name, r.Status, r.Body)
					}
				}
				if newSecret != "" {
					if r := chat.call(t, one, newSecret); r.Status != 200 {
						t.Errorf("the rotated key's new secret on the other instance: %d %s", r.Status, r.Body)
					}
				}
				refused := two.logs.WaitLines(t, record.MsgKeyRefused, 1)
				if len(refused) != 1 || refused[0]["key_id"] != id || refused[0]["reason"] != ch.reason {
					t.Errorf("key_refused lines %v, want one for %s (%s)", refused, id, ch.reason)
				}
			})
		}
	}
}

// TestStoredKeyRevocationTakesAtMostFiveSeconds measures, on the real clock, how long a
// change made on the store takes to stop the key on another instance that has it cached and
// is not asked in between: the background read (every 2 s) normally does it; the bound is 5 s.
func TestStoredKeyRevocationTakesAtMostFiveSeconds(t *testing.T) {
	for _, st := range sharedKeyStores {
		for _, action := range []string{"key.delete", "key.disable", "key.rotate"} {
			t.Run(st.name+"/"+action, func(t *testing.T) {
				t.Parallel()
				store, other := st.open(t)
				one := newGateway(t, storedKeysConfig, func(o *gateway.Options) { o.KeyStore = store })
				two := newGateway(t, storedKeysConfig, func(o *gateway.Options) { o.KeyStore = other })
				t.Cleanup(one.Gateway.Close)
				t.Cleanup(two.Gateway.Close)
				admin := keyAdmin{t, store, time.Now}
				secret, id := admin.create("team-a", nil)
				chat := keyDoors[0]
				for _, g := range []*testGateway{one, two} {
					if r := chat.call(t, g, secret); r.Status != 200 {
						t.Fatalf("%d %s", r.Status, r.Body)
					}
				}
				switch action {
				case "key.rotate":
					admin.rotate(id)
				default:
					admin.update(id, action, func(k *keystore.Key) { k.Deleted, k.Disabled = action == "key.delete", action == "key.disable" })
				}
				start := time.Now() // the change is written
				// Instance one is asked until it refuses; two not at all until 5 s have passed.
				var took time.Duration
				for took == 0 && time.Since(start) < 6*time.Second {
					if r := chat.call(t, one, secret); r.Status == 401 {
						took = time.Since(start)
					}
					time.Sleep(20 * time.Millisecond)
				}
				if took == 0 || took > 5*time.Second {
					t.Errorf("instance one refused the key %v after the change (0: not within 6 s), more than 5 s", took)
				}
				time.Sleep(time.Until(start.Add(5*time.Second + 10*time.Millisecond)))
				if r := chat.call(t, two, secret); r.Status != 401 {
					t.Errorf("instance two 5 s after the change: %d, want 401", r.Status)
				}
				t.Logf("%s reached instance one in %v", action, took.Round(time.Millisecond))
			})
		}
	}
}

// TestKeyStoreUnreachable: with the store unreachable, a cached stored key keeps working for
// key_store.stale_for after the store last answered and then gets a 503 (each door's shape,
// as TestStoredKeyOnEveryDoor checks), a key not cached fails closed at once, and the outage
// is logged once (one key_store_error, one key_store_recovered), not per request. When the
// store answers again, the keys work again.
func TestKeyStoreUnreachable(t *testing.T) {
	clock := newKeyClock()
	store := newFlakyStore(keystore.NewMemory())
	g := storedKeysGateway(t, storedKeysConfig, store, clock)
	admin := keyAdmin{t, store, clock.Now}
	secret, _ := admin.create("team-a", nil)
	chat := keyDoors[0]
	if r := chat.call(t, g, secret); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	store.down.Store(true)
	fresh, _ := admin.create("team-b", nil)
	requests := 1
	for step := range 13 { // 13 x 5 s: to past stale_for (1m)
		clock.Advance(5 * time.Second)
		for _, c := range []struct {
			secret string
			want   int
		}{{secret, 200}, {fresh, 503}} {
			if step == 12 && c.want == 200 {
				c.want = 503 // more than a minute after the store last answered
			}
			r := chat.call(t, g, c.secret)
			requests++
			if r.Status != c.want {
				t.Fatalf("%v into the outage: %d %s, want %d", time.Duration(step+1)*5*time.Second, r.Status, r.Body, c.want)
			}
			if c.want == 503 && chat.refusal(t, r).code != "key_store_unavailable" {
				t.Errorf("503 %s", r.Body)
			}
		}
	}
	if r := chat.call(t, g, configKey); r.Status != 200 {
		t.Errorf("config key in the outage: %d %s", r.Status, r.Body)
	}
	requests++
	store.down.Store(false)
	clock.Advance(2 * time.Second) // the pause after a failed read
	for _, s := range []string{secret, fresh} {
		if r := chat.call(t, g, s); r.Status != 200 {
			t.Errorf("after the outage: %d %s", r.Status, r.Body)
		}
		requests++
	}
	lines := g.logs.AfterRequests(t, requests)
	var failed, recovered []map[string]any
	for _, l := range lines {
		switch l["msg"] {
		case record.MsgKeyStoreError:
			failed = append(failed, l)
		case record.MsgKeyStoreRecovered:
			recovered = append(recovered, l)
		}
	}
	if len(failed) != 1 || !strings.Contains(fmt.Sprint(failed[0]["error"]), "connection refused") || failed[0]["level"] != "ERROR" {
		t.Errorf("key_store_error lines: %v, want one for the whole outage", failed)
	}
	if len(recovered) != 1 || recovered[0]["failures"].(float64) < 2 {
		t.Errorf("key_store_recovered lines: %v, want one counting the outage's failures", recovered)
	}
}

// TestRandomKeysCannotFloodTheStore: secrets nobody was given are looked up in the store at
// most at the bucket's rate (its burst of 40 at once), each unknown secret once while it is
// negatively cached, and every one gets the 401; the store's own keys still work.
func TestRandomKeysCannotFloodTheStore(t *testing.T) {
	clock := newKeyClock()
	store := newFlakyStore(keystore.NewMemory())
	g := storedKeysGateway(t, storedKeysConfig, store, clock)
	admin := keyAdmin{t, store, clock.Now}
	secret, _ := admin.create("team-a", nil)
	chat := keyDoors[0]
	if r := chat.call(t, g, secret); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	before := store.byHash.Load()
	for i := range 200 {
		if r := chat.call(t, g, fmt.Sprintf("sk-fngate-random-%04d", i)); r.Status != 401 {
			t.Fatalf("random key %d: %d %s", i, r.Status, r.Body)
		}
	}
	looked := store.byHash.Load() - before
	if looked > 40 {
		t.Errorf("200 random keys made %d store look-ups, more than the bucket's burst of 40", looked)
	}
	for i := range 10 { // looked up already: negatively cached
		_ = chat.call(t, g, fmt.Sprintf("sk-fngate-random-%04d", i))
	}
	if again := store.byHash.Load() - before; again != looked {
		t.Errorf("unknown keys asked again: %d look-ups after %d", again, looked)
	}
	if r := chat.call(t, g, secret); r.Status != 200 {
		t.Errorf("the cached key under the flood: %d %s", r.Status, r.Body)
	}
	clock.Advance(time.Second) // the bucket refills
	newer, _ := admin.create("team-b", nil)
	if r := chat.call(t, g, newer); r.Status != 200 {
		t.Errorf("a new key once the bucket has refilled: %d %s", r.Status, r.Body)
	}
}

// TestConcurrentRequestsOfANewKeyLookItUpOnce: requests that carry one uncached secret at
// once make one store look-up between them.
func TestConcurrentRequestsOfANewKeyLookItUpOnce(t *testing.T) {
	clock := newKeyClock()
	store := newFlakyStore(keystore.NewMemory())
	store.byHashStarted, store.byHashMayAnswer = make(chan struct{}, 10), make(chan struct{})
	g := storedKeysGateway(t, storedKeysConfig, store, clock)
	secret, _ := keyAdmin{t, store, clock.Now}.create("team-a", nil)
	var wg sync.WaitGroup
	status := make(chan int, 8)
	for range 8 {
		wg.Go(func() { status <- keyDoors[0].call(t, g, secret).Status })
	}
	<-store.byHashStarted
	time.Sleep(100 * time.Millisecond) // the others arrive and wait for the look-up
	close(store.byHashMayAnswer)
	wg.Wait()
	close(status)
	for s := range status {
		if s != 200 {
			t.Errorf("status %d", s)
		}
	}
	if n := store.byHash.Load(); n != 1 {
		t.Errorf("%d look-ups for one secret", n)
	}
}

// TestStoredKeyLimits: a stored key's rate limit holds like a config key's (its refusal names
// the key), key_defaults apply to a stored key that sets no limits, a change of limits applies
// once it reaches the instance, and the counters follow the key's id: a key deleted and made
// again under its name starts with none of the old one's.
func TestStoredKeyLimits(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	g := storedKeysGateway(t, storedKeysConfig+"key_defaults: {rate: {requests_per_minute: 1}}\n", store, clock,
		func(o *gateway.Options) { o.Counters = counters.NewMemory() })
	admin := keyAdmin{t, store, clock.Now}
	chat := keyDoors[0]
	two, twoID := admin.create("team-two", func(k *keystore.Key) { k.Rate = &config.Rate{RequestsPerMinute: 2} })
	dflt, _ := admin.create("team-default", nil)
	for i, c := range []struct {
		secret string
		want   int
	}{{two, 200}, {two, 200}, {two, 429}, {dflt, 200}, {dflt, 429}} {
		r := chat.call(t, g, c.secret)
		if r.Status != c.want {
			t.Fatalf("request %d: %d %s, want %d", i+1, r.Status, r.Body, c.want)
		}
		if c.want == 429 && c.secret == two && !strings.Contains(string(r.Body), "for key team-two on requests per minute") {
			t.Errorf("refusal: %s", r.Body)
		}
	}
	admin.update(twoID, "key.update", func(k *keystore.Key) { k.Rate = &config.Rate{RequestsPerMinute: 10} })
	clock.Advance(freshFor)
	if r := chat.call(t, g, two); r.Status != 200 {
		t.Errorf("after the limit was raised: %d %s", r.Status, r.Body)
	}
	admin.update(twoID, "key.delete", func(k *keystore.Key) { k.Deleted = true })
	again, _ := admin.create("team-two", func(k *keystore.Key) { k.Rate = &config.Rate{RequestsPerMinute: 2} })
	clock.Advance(freshFor)
	for i := range 2 {
		if r := chat.call(t, g, again); r.Status != 200 {
			t.Errorf("the new team-two, request %d: %d %s (the old key's counters?)", i+1, r.Status, r.Body)
		}
	}
}

// TestStoredKeyModelsAndProfile: a stored key's model globs and request profile apply as a
// config key's do; a stored key that sets no profile takes the config's.
func TestStoredKeyModelsAndProfile(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	g := storedKeysGateway(t, storedKeysConfig, store, clock)
	admin := keyAdmin{t, store, clock.Now}
	only, _ := admin.create("only-m", func(k *keystore.Key) { k.Models = []string{"m"} })
	ext, _ := admin.create("extended", func(k *keystore.Key) { k.RequestProfile = config.ProfileExtended })
	other := `{"model":"other","messages":[{"role":"user","content":"hi"}]}`
	seeded := `{"model":"m","seed":7,"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		name, secret, body string
		want               int
	}{
		{"a model outside its globs", only, other, 404},
		{"its model", only, keyDoors[0].body, 200},
		{"strict: the config's profile", only, seeded, 400},
		{"extended: its own", ext, seeded, 200},
	} {
		if r := g.Chat(t, c.body, bearer(c.secret)...); r.Status != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.want)
		}
	}
	r := g.Do(t, http.MethodGet, "/v1/models", "", bearer(only)...)
	if ids := fmt.Sprint(r.JSON(t)["data"]); !strings.Contains(ids, "id:m ") || strings.Contains(ids, "other") {
		t.Errorf("the model list of a key for m alone: %s", r.Body)
	}
}

// TestStoredResponsesFollowTheKeyID: a stored response belongs to the key's id, so a key made
// again under a deleted key's name cannot read it.
func TestStoredResponsesFollowTheKeyID(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	g := storedKeysGateway(t, storedKeysConfig, store, clock, func(o *gateway.Options) { o.ResponseStore = responsestore.NewMemory() })
	admin := keyAdmin{t, store, clock.Now}
	first, firstID := admin.create("team", nil)
	r := g.Do(t, http.MethodPost, "/v1/responses", `{"model":"m","input":"remember PAPAYA","store":true}`, bearer(first)...)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	respID := fmt.Sprint(r.JSON(t)["id"])
	if r := g.Do(t, http.MethodGet, "/v1/responses/"+respID, "", bearer(first)...); r.Status != 200 {
		t.Fatalf("its own response: %d %s", r.Status, r.Body)
	}
	admin.update(firstID, "key.delete", func(k *keystore.Key) { k.Deleted = true })
	second, _ := admin.create("team", nil)
	if r := g.Do(t, http.MethodGet, "/v1/responses/"+respID, "", bearer(second)...); r.Status != 404 {
		t.Errorf("a new key under the old name read the old key's response: %d %s", r.Status, r.Body)
	}
}

// TestWebSocketChecksAStoredKeyEachMessage: on the Responses API's WebSocket mode, a
// connection opened with a stored key serves its response.create messages while the key
// works and refuses them (a 401 error event, the connection left open) once its revocation
// has reached the instance; a handshake with an unknown secret is refused.
func TestWebSocketChecksAStoredKeyEachMessage(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	g := storedKeysGateway(t, storedKeysConfig, store, clock)
	admin := keyAdmin{t, store, clock.Now}
	secret, id := admin.create("team-a", nil)
	if _, resp, err := gatewaytest.TryDialResponses(g.URL, "sk-fngate-unknown-0123456789"); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("handshake with an unknown key: %v %v", err, resp)
	}
	s := gatewaytest.DialResponses(t, g.URL, secret)
	create := `{"type":"response.create","model":"m","input":"one two"}`
	if turn := s.Turn(t, create); turn.Status() != "completed" {
		t.Fatalf("first response: %v", turn.Raw)
	}
	admin.update(id, "key.disable", func(k *keystore.Key) { k.Disabled = true })
	clock.Advance(freshFor)
	turn := s.Turn(t, create)
	if turn.Status() != "error" || turn.ErrorCode() != "invalid_api_key" || turn.Error["status"] != float64(401) {
		t.Fatalf("after the key was disabled: %v", turn.Raw)
	}
	admin.update(id, "key.enable", func(k *keystore.Key) { k.Disabled = false })
	clock.Advance(freshFor)
	if turn := s.Turn(t, create); turn.Status() != "completed" {
		t.Errorf("after the key was enabled again: %v", turn.Raw)
	}
	lines := g.logs.AfterRequests(t, 4)
	var ws []map[string]any
	for _, l := range lines {
		if l["msg"] == record.MsgRequest && l["transport"] == "websocket" {
			ws = append(ws, l)
		}
	}
	if len(ws) != 3 || ws[0]["labels"].(map[string]any)["key_id"] != id {
		t.Errorf("WebSocket request lines %v", ws)
	}
}

// keyTracer keeps each traced request's key name and id.
type keyTracer struct {
	recordingTracer
	keys chan [2]string
}

func (t *keyTracer) Request(r *http.Request, endpoint string) record.RequestTrace {
	return &keyTrace{recordedRequest{t: &t.recordingTracer, endpoint: endpoint}, t.keys}
}

type keyTrace struct {
	recordedRequest
	keys chan [2]string
}

func (r *keyTrace) End(rec *record.Request) { r.keys <- [2]string{rec.Key, rec.KeyID} }

// TestTraceNamesAStoredKeysID: a traced request of a stored key carries its name and its id;
// a config key's, its name alone.
func TestTraceNamesAStoredKeysID(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	tr := &keyTracer{keys: make(chan [2]string, 4)}
	g := storedKeysGateway(t, storedKeysConfig, store, clock, func(o *gateway.Options) { o.Tracer = tr })
	secret, id := keyAdmin{t, store, clock.Now}.create("team-a", nil)
	for _, c := range []struct{ secret, name, id string }{{secret, "team-a", id}, {configKey, "ops", ""}} {
		if r := keyDoors[0].call(t, g, c.secret); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if got := <-tr.keys; got != [2]string{c.name, c.id} {
			t.Errorf("trace key %q, want %q", got, [2]string{c.name, c.id})
		}
	}
}

// TestStoredKeysAloneCloseTheGateway: a gateway with a key store and no config keys is not
// open: a request needs a stored key.
func TestStoredKeysAloneCloseTheGateway(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	g := storedKeysGateway(t, strings.Replace(storedKeysConfig, "keys:\n  - {name: ops, value: sk-config-ops-0123456789}\n", "", 1), store, clock)
	if r := g.Chat(t, keyDoors[0].body); r.Status != 401 {
		t.Errorf("no key: %d %s", r.Status, r.Body)
	}
	secret, _ := keyAdmin{t, store, clock.Now}.create("team-a", nil)
	if r := g.Chat(t, keyDoors[0].body, bearer(secret)...); r.Status != 200 {
		t.Errorf("a stored key: %d %s", r.Status, r.Body)
	}
}
