package gateway_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// cacheKeys: a and b are of one team, c of none.
const (
	cacheKeyA = "sk-cache-a-0123456789"
	cacheKeyB = "sk-cache-b-0123456789"
	cacheKeyC = "sk-cache-c-0123456789"
)

// cacheUpstreams are the fakes behind a cache test's gateways, which count what reached them.
type cacheUpstreams struct {
	oa *openaifake.Server
	an *anthropicfake.Server
}

func (u *cacheUpstreams) calls() int { return len(u.oa.Requests()) + len(u.an.Requests()) }

func newCacheUpstreams(t *testing.T) *cacheUpstreams {
	oa := openaifake.New()
	t.Cleanup(oa.Close)
	oa.Script = openaifake.Model
	an := anthropicfake.New()
	t.Cleanup(an.Close)
	an.Script = anthropicfake.Model
	return &cacheUpstreams{oa: oa, an: an}
}

// cacheConfig is two models per backend wire: gpt (OpenAI's, whose Responses API the
// Responses door passes through) and claude (Anthropic's, which the Messages door passes
// through); extra is appended to the models' cache setting (", scope: team").
func cacheConfig(u *cacheUpstreams, extra string) string {
	return `
keys:
  - {name: a, value: ` + cacheKeyA + `, team: red}
  - {name: b, value: ` + cacheKeyB + `, team: red}
  - {name: c, value: ` + cacheKeyC + `}
connections:
  oai: {kind: openai, api_key: sk-up-fake-0123456789, base_url: "` + u.oa.BaseURL() + `"}
  claude: {kind: anthropic, api_key: ` + anthropicfake.APIKey + `, base_url: "` + u.an.URL + `"}
models:
  gpt: {cache: {ttl: 1h` + extra + `}, routes: [{connection: oai, model: gpt-fake}]}
  claude: {cache: {ttl: 1h` + extra + `}, routes: [{connection: claude, model: claude-sonnet-4-5}]}
  uncached: {routes: [{connection: oai, model: gpt-fake}]}
  claude-uncached: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
response_cache: {timeout: 20s} # the emulators are slow under the race detector
`
}

func cacheRegistry() providers.Registry {
	reg := providers.Registry{}
	openaicompat.Register(reg)
	anthropic.Register(reg)
	return reg
}

// cacheInstances serves two gateways of one config on one cache store, as two instances of
// a deployment are.
func cacheInstances(t *testing.T, yaml string, stores [2]responsecache.Store, opt gateway.Options) [2]*gatewaytest.Server {
	return cacheInstancesOf(t, [2]string{yaml, yaml}, stores, opt)
}

// cacheInstancesOf is cacheInstances with a config of each instance's own, for what a
// difference between them does to the entries they share.
func cacheInstancesOf(t *testing.T, yamls [2]string, stores [2]responsecache.Store, opt gateway.Options) [2]*gatewaytest.Server {
	var out [2]*gatewaytest.Server
	for i := range out {
		cfg := gatewaytest.Config(t, yamls[i], config.Options{Getenv: func(string) string { return "" }})
		o := opt
		o.Registry, o.Cache = cacheRegistry(), stores[i]
		if o.Logger == nil {
			o.Logger = (&gatewaytest.LogBuffer{}).Logger()
		}
		out[i] = gatewaytest.Serve(t, cfg, o)
		// Before the stores' own cleanup (a file store's directory): a miss's write may still
		// be on its way when the test ends.
		gw := out[i].Gateway
		t.Cleanup(func() { _ = gw.Flush(context.Background()) })
	}
	return out
}

// cacheDoor is one door's request, as a client sends it.
type cacheDoor struct {
	name, path, model string
	body              func(model string, stream bool) string
	header            []string // besides the key
}

var cacheDoors = []cacheDoor{
	{name: "chat", path: "/v1/chat/completions", model: "gpt", body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"Name three primes."}]}`, m, stream)
	}},
	{name: "chat-on-claude", path: "/v1/chat/completions", model: "claude", body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"max_completion_tokens":64,"messages":[{"role":"user","content":"Name three primes."}]}`, m, stream)
	}},
	{name: "completions", path: "/v1/completions", model: "gpt", body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"prompt":"Name three primes."}`, m, stream)
	}},
	{name: "messages", path: "/v1/messages", model: "claude", header: []string{"anthropic-version", "2023-06-01"}, body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"max_tokens":64,"messages":[{"role":"user","content":"Name three primes."}]}`, m, stream)
	}},
	{name: "messages-on-gpt", path: "/v1/messages", model: "gpt", header: []string{"anthropic-version", "2023-06-01"}, body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"max_tokens":64,"messages":[{"role":"user","content":"Name three primes."}]}`, m, stream)
	}},
	{name: "responses", path: "/v1/responses", model: "gpt", body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"store":false,"input":"Name three primes."}`, m, stream)
	}},
	{name: "responses-on-claude", path: "/v1/responses", model: "claude", body: func(m string, stream bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%v,"store":false,"max_output_tokens":64,"input":"Name three primes."}`, m, stream)
	}},
}

func (d *cacheDoor) do(t *testing.T, s *gatewaytest.Server, key string, stream bool, header ...string) *gatewaytest.Response {
	t.Helper()
	h := append([]string{"Authorization", "Bearer " + key}, d.header...)
	r := s.Do(t, "POST", d.path, d.body(d.model, stream), append(h, header...)...)
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", d.path, r.Status, r.Body)
	}
	return r
}

// ids and times a hit makes anew; the rest of a hit's body is the miss's.
var fresh = regexp.MustCompile(`"(id|created|created_at|completed_at|response_id|item_id|call_id|tool_call_id|tool_use_id)":\s*("[^"]*"|\d+)|(msg|resp|chatcmpl|cmpl|call|toolu|fc|rs)_[A-Za-z0-9_-]+`)

func withoutFresh(body []byte) string { return fresh.ReplaceAllString(string(body), "«fresh»") }

// flush waits until the instance's cache writes are done.
func flush(t *testing.T, s *gatewaytest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Gateway.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCacheMissThenHitOnTheOtherInstance(t *testing.T) {
	onEveryCacheStore(t, func(t *testing.T, _ cacheStore, open func(*testing.T, func() time.Time) [2]responsecache.Store) {
		for _, d := range cacheDoors {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/stream=%v", d.name, stream), func(t *testing.T) {
					t.Parallel()
					u := newCacheUpstreams(t)
					gw := cacheInstances(t, cacheConfig(u, ""), open(t, time.Now), gateway.Options{})
					miss := d.do(t, gw[0], cacheKeyA, stream)
					if got := miss.Header.Get(gateway.HeaderCache); got != "miss" {
						t.Fatalf("first request: %s %q, want miss", gateway.HeaderCache, got)
					}
					flush(t, gw[0])
					before := u.calls()
					hit := d.do(t, gw[1], cacheKeyA, stream)
					if got := hit.Header.Get(gateway.HeaderCache); got != "hit" {
						t.Fatalf("second request on the other instance: %s %q, want hit; body %s", gateway.HeaderCache, got, hit.Body)
					}
					if u.calls() != before {
						t.Errorf("the hit reached the upstream")
					}
					if got, want := withoutFresh(hit.Body), withoutFresh(miss.Body); got != want {
						t.Errorf("the hit's body differs from the miss's\n hit: %s\nmiss: %s", got, want)
					}
					if string(hit.Body) == string(miss.Body) {
						t.Errorf("the hit repeats the miss's ids: %s", hit.Body)
					}
				})
			}
		}
	})
}

// A stream's recording answers a request made whole, and a whole answer one streamed, where
// the gateway's own fields hold the answer (every route here but the Responses door's
// OpenAI one, whose items only its own events carry).
func TestCacheServesTheOtherForm(t *testing.T) {
	for _, d := range cacheDoors {
		for _, first := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/first-stream=%v", d.name, first), func(t *testing.T) {
				t.Parallel()
				u := newCacheUpstreams(t)
				gw := cacheInstances(t, cacheConfig(u, ""), memoryCache(), gateway.Options{})
				miss := d.do(t, gw[0], cacheKeyA, first)
				flush(t, gw[0])
				want := "hit"
				if d.name == "responses" {
					want = "miss"
				}
				other := d.do(t, gw[1], cacheKeyA, !first)
				if got := other.Header.Get(gateway.HeaderCache); got != want {
					t.Fatalf("%s %q, want %s; body %s", gateway.HeaderCache, got, want, other.Body)
				}
				if got, want := answerText(t, !first, other.Body), answerText(t, first, miss.Body); got != want || got == "" {
					t.Errorf("the answer says %q, the miss said %q", got, want)
				}
			})
		}
	}
}

// answerText is the text of an answer in a door's shape, whole or streamed.
func answerText(t *testing.T, stream bool, body []byte) string {
	t.Helper()
	if !stream {
		var v struct {
			Choices []struct {
				Text    string `json:"text"`
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Output []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"output"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var b strings.Builder
		for _, c := range v.Choices {
			b.WriteString(c.Text + c.Message.Content)
		}
		for _, c := range v.Content {
			b.WriteString(c.Text)
		}
		for _, o := range v.Output {
			for _, c := range o.Content {
				b.WriteString(c.Text)
			}
		}
		return b.String()
	}
	var b strings.Builder
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var v struct {
			Choices []struct {
				Text  string `json:"text"`
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Type  string `json:"type"`
			Delta json.RawMessage
		}
		if json.Unmarshal([]byte(data), &v) != nil {
			continue
		}
		for _, c := range v.Choices {
			b.WriteString(c.Text + c.Delta.Content)
		}
		switch v.Type {
		case "response.output_text.delta":
			var s string
			_ = json.Unmarshal(v.Delta, &s)
			b.WriteString(s)
		case "content_block_delta":
			var cd struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(v.Delta, &cd)
			b.WriteString(cd.Text)
		}
	}
	return b.String()
}

// memoryCache is one memory store both instances share.
func memoryCache() [2]responsecache.Store {
	m := responsecache.NewMemory()
	return [2]responsecache.Store{m, m}
}

// optInConfig is one key, a, on a model gpt, with the cache settings given ("": none) of the
// model, the key and key_defaults; model other always caches, so the gateway has a store
// whatever gpt's requests do.
func optInConfig(u *cacheUpstreams, model, key, defaults string) string {
	set := func(s string) string {
		if s == "" {
			return ""
		}
		return ", cache: " + s
	}
	y := `
keys:
  - {name: a, value: ` + cacheKeyA + set(key) + `}
connections:
  oai: {kind: openai, api_key: sk-up-fake-0123456789, base_url: "` + u.oa.BaseURL() + `"}
models:
  gpt: {routes: [{connection: oai, model: gpt-fake}]` + set(model) + `}
  other: {cache: {ttl: 1h}, routes: [{connection: oai, model: gpt-fake}]}
`
	if defaults != "" {
		y += "key_defaults: {cache: " + defaults + "}\n"
	}
	return y
}

// TestCacheOptIn: the cache is off until a model, a key or key_defaults opts in, and a
// request's setting is its key's own, else key_defaults', else its model's
// (Gateway.cacheSetting), so `cache: {}` on a key, or in key_defaults, turns off what the
// model caches. A request whose setting caches nothing carries no x-fngate-cache.
func TestCacheOptIn(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		model, key, defaults string
		want                 string // the second of two identical requests: hit, or "" (not cached)
	}{
		{name: "off by default", want: ""},
		{name: "on the model", model: "{ttl: 1h}", want: "hit"},
		{name: "on the key", key: "{ttl: 1h}", want: "hit"},
		{name: "in key_defaults", defaults: "{ttl: 1h}", want: "hit"},
		{name: "cache {} on the key over its model's", model: "{ttl: 1h}", key: "{}", want: ""},
		{name: "cache {} on the key over key_defaults'", key: "{}", defaults: "{ttl: 1h}", want: ""},
		{name: "cache {} in key_defaults over the model's", model: "{ttl: 1h}", defaults: "{}", want: ""},
		{name: "the key's own over key_defaults' {}", key: "{ttl: 1h}", defaults: "{}", want: "hit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			gw := cacheInstances(t, optInConfig(u, tc.model, tc.key, tc.defaults), memoryCache(), gateway.Options{})
			first := chatDoor.do(t, gw[0], cacheKeyA, false)
			flush(t, gw[0])
			before := u.calls()
			second := chatDoor.do(t, gw[1], cacheKeyA, false)
			wantFirst, wantCalls := "miss", 0
			if tc.want == "" {
				wantFirst, wantCalls = "", 1
			}
			if got := cacheResult(first); got != wantFirst {
				t.Errorf("the first request: %s %q, want %q", gateway.HeaderCache, got, wantFirst)
			}
			if got := cacheResult(second); got != tc.want || u.calls()-before != wantCalls {
				t.Errorf("the second request: %s %q with %d upstream calls, want %q with %d", gateway.HeaderCache, got, u.calls()-before, tc.want, wantCalls)
			}
		})
	}
}

// TestCacheLeavesLabelsOutOfTheKey: stream, stream_options and the log labels (metadata,
// user) do not change an answer, so a request that differs from a cached one only in them
// is a hit, on every door; a sampling setting does change it (the control).
func TestCacheLeavesLabelsOutOfTheKey(t *testing.T) {
	chat := func(extra string) string {
		return `{"model":"gpt"` + extra + `,"messages":[{"role":"user","content":"Name three primes."}]}`
	}
	messages := func(extra string) string {
		return `{"model":"claude"` + extra + `,"max_tokens":64,"messages":[{"role":"user","content":"Name three primes."}]}`
	}
	responses := func(extra string) string {
		return `{"model":"claude"` + extra + `,"store":false,"max_output_tokens":64,"input":"Name three primes."}`
	}
	anthropic := []string{"anthropic-version", "2023-06-01"}
	for _, tc := range []struct {
		name, path    string
		first, second string
		header        []string
		want          string
	}{
		{name: "chat stream and stream_options", path: "/v1/chat/completions", first: chat(""), second: chat(`,"stream":true,"stream_options":{"include_usage":true}`), want: "hit"},
		{name: "chat metadata", path: "/v1/chat/completions", first: chat(`,"metadata":{"run":"ci-41"}`), second: chat(`,"metadata":{"run":"ci-42"}`), want: "hit"},
		{name: "chat user", path: "/v1/chat/completions", first: chat(""), second: chat(`,"user":"alice"`), want: "hit"},
		{name: "chat temperature (control)", path: "/v1/chat/completions", first: chat(""), second: chat(`,"temperature":0.5`), want: "miss"},
		{name: "messages stream", path: "/v1/messages", first: messages(""), second: messages(`,"stream":true`), header: anthropic, want: "hit"},
		{name: "messages metadata.user_id", path: "/v1/messages", first: messages(`,"metadata":{"user_id":"u-1"}`), second: messages(`,"metadata":{"user_id":"u-2"}`), header: anthropic, want: "hit"},
		{name: "messages metadata or none", path: "/v1/messages", first: messages(""), second: messages(`,"metadata":{"user_id":"u-2"}`), header: anthropic, want: "hit"},
		{name: "messages temperature (control)", path: "/v1/messages", first: messages(""), second: messages(`,"temperature":0.5`), header: anthropic, want: "miss"},
		{name: "responses stream", path: "/v1/responses", first: responses(""), second: responses(`,"stream":true`), want: "hit"},
		{name: "responses metadata", path: "/v1/responses", first: responses(`,"metadata":{"run":"ci-41"}`), second: responses(`,"metadata":{"run":"ci-42"}`), want: "hit"},
		{name: "responses metadata or none", path: "/v1/responses", first: responses(""), second: responses(`,"metadata":{"run":"ci-42"}`), want: "hit"},
		{name: "responses user", path: "/v1/responses", first: responses(""), second: responses(`,"user":"alice"`), want: "hit"},
		{name: "responses stream_options", path: "/v1/responses", first: responses(""), second: responses(`,"stream":true,"stream_options":{"include_obfuscation":false}`), want: "hit"},
		{name: "responses temperature (control)", path: "/v1/responses", first: responses(""), second: responses(`,"temperature":0.5`), want: "miss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			gw := cacheInstances(t, cacheConfig(u, ""), memoryCache(), gateway.Options{})
			h := append([]string{"Authorization", "Bearer " + cacheKeyA}, tc.header...)
			for i, body := range []string{tc.first, tc.second} {
				r := gw[i].Do(t, "POST", tc.path, body, h...)
				if r.Status != 200 {
					t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
				}
				flush(t, gw[i])
				if want := []string{"miss", tc.want}[i]; cacheResult(r) != want {
					t.Errorf("request %d: %s %q, want %q", i, gateway.HeaderCache, cacheResult(r), want)
				}
			}
		})
	}
}

// splitConfig is cacheConfig's gpt for key a, with extra settings on the key, gpt's cache
// setting ("": ttl: 1h), and its one route labelled eu (which a key of any residency, or none, may use).
func splitConfig(u *cacheUpstreams, key, cache string) string {
	return `
keys:
  - {name: a, value: ` + cacheKeyA + `, team: red` + key + `}
connections:
  oai: {kind: openai, api_key: sk-up-fake-0123456789, base_url: "` + u.oa.BaseURL() + `"}
models:
  gpt: {cache: {` + cmp.Or(cache, "ttl: 1h") + `}, routes: [{connection: oai, model: gpt-fake, residency: eu}]}
`
}

// TestCacheSplitsEntries: two instances of one key that read its request under another
// profile, pin it to another residency, or cache it in another scope do not share an entry,
// since their answers may differ or their sharing would; a ttl of their own does not split
// them (the control: what splits is what the partition holds, not any difference).
func TestCacheSplitsEntries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   [2]string // extra settings of each instance's key
		cache [2]string // each instance's cache setting of gpt ("": ttl: 1h)
		want  string
	}{
		{name: "the same config", want: "hit"},
		{name: "another ttl", cache: [2]string{"ttl: 1h", "ttl: 2h"}, want: "hit"},
		{name: "request profile strict vs extended", key: [2]string{", request_profile: strict", ", request_profile: extended"}, want: "miss"},
		{name: "request profile extended vs extended ignoring names", key: [2]string{", request_profile: extended", ", request_profile: extended, request_profile_ignore: [messages.name]"}, want: "miss"},
		{name: "residency none vs eu", key: [2]string{"", ", residency: eu"}, want: "miss"},
		{name: "scope key vs team", cache: [2]string{"ttl: 1h, scope: key", "ttl: 1h, scope: team"}, want: "miss"},
		{name: "scope team vs global", cache: [2]string{"ttl: 1h, scope: team", "ttl: 1h, scope: global"}, want: "miss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			yamls := [2]string{splitConfig(u, tc.key[0], tc.cache[0]), splitConfig(u, tc.key[1], tc.cache[1])}
			gw := cacheInstancesOf(t, yamls, memoryCache(), gateway.Options{})
			chatDoor.do(t, gw[0], cacheKeyA, false)
			flush(t, gw[0])
			before := u.calls()
			r := chatDoor.do(t, gw[1], cacheKeyA, false)
			if got := cacheResult(r); got != tc.want || (u.calls() == before) != (tc.want == "hit") {
				t.Errorf("the other instance: %s %q with %d upstream calls, want %q", gateway.HeaderCache, got, u.calls()-before, tc.want)
			}
		})
	}
}

// TestCacheDoorsDoNotShare: the same conversation through the chat, Messages and Responses
// doors is one request per door (docs/cache.md: the Messages door hoists late system
// messages, carries Anthropic's fields and passes an Anthropic-wire answer through; the
// Responses door carries its items), so each door misses what another cached; one door,
// streamed or not, shares.
func TestCacheDoorsDoNotShare(t *testing.T) {
	chat, messages, responses := &cacheDoors[1], &cacheDoors[3], &cacheDoors[6] // all on claude
	for _, tc := range []struct {
		first, second *cacheDoor
		stream        [2]bool
		want          string
	}{
		{first: chat, second: messages, want: "miss"},
		{first: messages, second: chat, want: "miss"},
		{first: chat, second: responses, want: "miss"},
		{first: responses, second: messages, want: "miss"},
		{first: messages, second: messages, stream: [2]bool{false, true}, want: "hit"},
		{first: chat, second: chat, stream: [2]bool{true, false}, want: "hit"},
	} {
		t.Run(fmt.Sprintf("%s/stream=%v-then-%s/stream=%v", tc.first.name, tc.stream[0], tc.second.name, tc.stream[1]), func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			gw := cacheInstances(t, cacheConfig(u, ""), memoryCache(), gateway.Options{})
			tc.first.do(t, gw[0], cacheKeyA, tc.stream[0])
			flush(t, gw[0])
			if got := cacheResult(tc.second.do(t, gw[1], cacheKeyA, tc.stream[1])); got != tc.want {
				t.Errorf("%s %q, want %q", gateway.HeaderCache, got, tc.want)
			}
		})
	}
}
