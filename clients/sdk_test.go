package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/clients/internal/agents"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// The keys of the SDK tests: one per request profile. The extended key also lets routes
// that cannot carry participant names leave them out (LangChain names its messages), the
// operator's explicit choice.
const (
	sdkStrictKey   = "sk-gw-sdk-strict-0123456789"
	sdkExtendedKey = "sk-gw-sdk-extended-0123456789"
	// sdkCompactionKey seals the compaction items of node/compact.test.mjs.
	sdkCompactionKey = "Vh0dqwE5Q9m1Ck2w8Zr4yJb7nX3tL6pS0fG5aD9eH2U="
)

// sdkBackend is one backend the Node tests drive: the gateway models of plain chat and of
// tool use, and what its answer to a text is: the text after Said, with Usage as the
// backend reports it (nil: the mock's, a word count of the prompt and of the answer), and
// how /v1/messages/count_tokens counts on it (gateway.HeaderTokenCount); Native when the
// Responses door passes its requests through to the backend's own Responses API. Cached
// and CachedTools are Chat and Tools with the response cache on (cache: {ttl: 1h}).
type sdkBackend struct {
	Name        string    `json:"name"`
	Chat        string    `json:"chat"`
	Tools       string    `json:"tools"`
	Said        string    `json:"said"`
	Usage       *sdkUsage `json:"usage"`
	Count       string    `json:"count"`
	Native      bool      `json:"native"`
	Cached      string    `json:"cached"`
	CachedTools string    `json:"cachedTools"`
}

type sdkUsage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
}

// sdkGateway is what serveSDKGateway serves: the gateway at URL; at StoreURL a second one of
// the same config that also has a response store (the first has none, which the Vercel AI
// SDK's second turn relies on), for the cache's store: true answers; each with a memory
// response cache; and FlushURL, whose POST returns once both have written their cache
// entries (cacheFlush).
type sdkGateway struct {
	URL, StoreURL, FlushURL string
	Backends                []sdkBackend
}

// serveSDKGateway serves the mock and an OpenAI-wire and an Anthropic fake that answer like
// models (openaifake.Model, anthropicfake.Model).
func serveSDKGateway(t *testing.T) *sdkGateway {
	t.Helper()
	oa := openaifake.New()
	t.Cleanup(oa.Close)
	oa.Script = openaifake.Model
	an := anthropicfake.New()
	t.Cleanup(an.Close)
	an.Script = anthropicfake.Model
	yaml := `
keys:
  - {name: strict-app, value: ` + sdkStrictKey + `}
  - {name: sdk-app, value: ` + sdkExtendedKey + `, request_profile: extended, request_profile_ignore: [messages.name]}
connections:
  mock: {kind: mock}
  oai: {kind: openai, api_key: sk-up-fake-0123456789, base_url: "` + oa.BaseURL() + `"}
  claude: {kind: anthropic, api_key: ` + anthropicfake.APIKey + `, base_url: "` + an.URL + `"}
models:
  mock-chat: {routes: [{connection: mock, model: echo}]}
  mock-tools: {routes: [{connection: mock, model: tools}]}
  openai-chat: {routes: [{connection: oai, model: gpt-fake}]}
  claude-chat: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
  cached-mock: {cache: {ttl: 1h}, routes: [{connection: mock, model: echo}]}
  cached-mock-tools: {cache: {ttl: 1h}, routes: [{connection: mock, model: tools}]}
  cached-openai: {cache: {ttl: 1h}, routes: [{connection: oai, model: gpt-fake}]}
  cached-claude: {cache: {ttl: 1h}, routes: [{connection: claude, model: claude-sonnet-4-5}]}
responses: {compaction_keys: [{id: sdk, key: "` + sdkCompactionKey + `"}]}
`
	reg := providers.Registry{}
	mock.Register(reg)
	openaicompat.Register(reg)
	anthropic.Register(reg)
	logs := &gatewaytest.LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	flush := &cacheFlush{}
	serve := func(store responsestore.Store) string {
		cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
		srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: logs.Logger(), Cache: responsecache.NewMemory(), ResponseStore: store}, flush.wrap)
		flush.gateways = append(flush.gateways, srv.Gateway)
		return srv.URL
	}
	return &sdkGateway{
		URL: serve(nil), StoreURL: serve(responsestore.NewMemory()), FlushURL: flush.serve(t),
		Backends: []sdkBackend{
			{Name: "mock", Chat: "mock-chat", Tools: "mock-tools", Count: "exact",
				Cached: "cached-mock", CachedTools: "cached-mock-tools"},
			{Name: "openai fake", Chat: "openai-chat", Tools: "openai-chat", Said: "You said: ", Usage: &sdkUsage{5, 3}, Count: "estimate", Native: true,
				Cached: "cached-openai", CachedTools: "cached-openai"},
			{Name: "anthropic fake", Chat: "claude-chat", Tools: "claude-chat", Said: "You said: ", Usage: &sdkUsage{7, 3}, Count: "exact",
				Cached: "cached-claude", CachedTools: "cached-claude"},
		},
	}
}

// TestNodeSDKs runs clients/node/*.test.mjs (node's test runner), one subtest per file,
// against the gateway: the openai package (chat.completions.parse with zod, runTools,
// models.retrieve), the Vercel AI SDK (generateObject and tools with stepCountIs over .chat();
// generateText, streamText and a tool round trip over its default Responses provider),
// LangChain.js (createAgent over two turns, withStructuredOutput), LlamaIndex.TS (its default
// OpenAI LLM), @anthropic-ai/sdk on the Messages door, under both profiles on each backend, the
// openai package's responses.compact with its output sent back (compact.test.mjs), and a
// response cache hit as openai-node and @anthropic-ai/sdk parse it, against the miss before it
// (cache.test.mjs, which FNGATE_CACHE_FLUSH_URL tells when the miss is cached).
func TestNodeSDKs(t *testing.T) {
	node := requireNodeSDKs(t)
	gw := serveSDKGateway(t)
	list, _ := json.Marshal(gw.Backends)
	files, _ := filepath.Glob(filepath.Join("node", "*.test.mjs"))
	var env []string
	for _, kv := range os.Environ() {
		// Nothing but the gateway: no key or endpoint of the SDKs' own from the environment.
		if !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "LANGCHAIN_") && !strings.HasPrefix(kv, "LANGSMITH_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"FNGATE_URL="+gw.URL, "FNGATE_BASE_URL="+gw.URL+"/v1", "FNGATE_STRICT_KEY="+sdkStrictKey, "FNGATE_EXTENDED_KEY="+sdkExtendedKey,
		"FNGATE_BACKENDS="+string(list), "FNGATE_STORE_URL="+gw.StoreURL, "FNGATE_CACHE_FLUSH_URL="+gw.FlushURL,
		"LANGCHAIN_TRACING_V2=false", "LANGSMITH_TRACING=false", "NO_COLOR=1")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".test.mjs"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", file)
			cmd.Env = env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			t.Log(out.String())
			if err != nil {
				t.Fatalf("node --test %s: %v", file, err)
			}
		})
	}
}

// requireNodeSDKs returns node's path, or skips the test (fails it under FNGATE_REQUIRE_CLIENTS)
// with the install command when node or the SDKs are absent.
func requireNodeSDKs(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		for _, pkg := range []string{"openai", "ai", "@ai-sdk/openai", "@anthropic-ai/sdk", "langchain", "@langchain/openai", "@llamaindex/openai", "zod"} {
			if _, e := os.Stat(filepath.Join("node_modules", filepath.FromSlash(pkg), "package.json")); e != nil {
				err = e
				break
			}
		}
	}
	if err != nil {
		if os.Getenv(agents.RequireEnv) == "1" {
			t.Fatalf("%v (%s=1: the clients should be installed)", err, agents.RequireEnv)
		}
		t.Skipf("%v; install with: %s", err, agents.InstallCommand)
	}
	return node
}
