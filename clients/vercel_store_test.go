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

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const (
	vercelStoreKey = "sk-gw-vercel-store-0123456789"
	// toolSentence is what each backend says before it calls the tool: the message turn 2
	// refers to by item_reference.
	toolSentence = "Let me check the weather."
)

// TestVercelToolTurnsWithAStore runs node/store/vercel_tool_turns.test.mjs: the Vercel AI
// SDK's default provider over two turns with a tool, generated and streamed, on an Anthropic
// route and a Bedrock (Converse) route of a gateway with a memory response store. Turn 2
// refers to turn 1's message by item_reference; the gateway resolves it from the store, so
// each backend gets turn 1's sentence back in its assistant turn, which the fakes' records
// show.
func TestVercelToolTurnsWithAStore(t *testing.T) {
	node := requireNodeSDKs(t)
	an := anthropicfake.New()
	t.Cleanup(an.Close)
	an.Script = func(r *anthropicfake.Request) anthropicfake.Reply {
		reply := anthropicfake.Model(r) // the answer after the tool's result, or a call
		if a := reply.Answer; a != nil && len(a.Blocks) == 1 && a.Blocks[0].Type == "tool_use" {
			call := a.Blocks[0]
			a.Blocks = []anthropicfake.Block{anthropicfake.Text(toolSentence), anthropicfake.ToolUse(call.ID, call.Name, `{"city":"Paris"}`)}
		}
		return reply
	}
	awstest.Isolate(t, "AKIDVERCELSTORE")
	br := bedrockfake.Start()
	t.Cleanup(br.Close)
	br.AccessKeyID = "AKIDVERCELSTORE"
	turns := []bedrockfake.Answer{
		{Blocks: []bedrockfake.Block{{Text: toolSentence}, {ToolUse: &bedrockfake.ToolUse{ID: "tooluse_weather_1", Name: "weather", Input: `{"city":"Paris"}`}}},
			Usage: bedrockfake.Tokens(20, 8)},
		{Blocks: []bedrockfake.Block{{Text: "sunny in Paris, says the tool."}}, Usage: bedrockfake.Tokens(40, 7)},
	}
	br.Script("amazon.nova-generate-v1:0", turns...)
	br.Script("amazon.nova-stream-v1:0", turns...)

	cfg := gatewaytest.Config(t, `
keys:
  - {name: vercel, value: `+vercelStoreKey+`}
connections:
  claude: {kind: anthropic, api_key: `+anthropicfake.APIKey+`, base_url: "`+an.URL+`"}
  aws: {kind: bedrock, region: us-west-2, endpoint: "`+br.URL+`"}
models:
  claude-tools: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
  nova-generate: {routes: [{connection: aws, model: "amazon.nova-generate-v1:0"}]}
  nova-stream: {routes: [{connection: aws, model: "amazon.nova-stream-v1:0"}]}
`, config.Options{Getenv: func(string) string { return "" }})
	reg := providers.Registry{}
	anthropic.Register(reg)
	bedrock.Register(reg, sdkconfig.Load)
	logs := &gatewaytest.LogBuffer{}
	srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: logs.Logger(), ResponseStore: responsestore.NewMemory()})

	list, _ := json.Marshal([]map[string]string{
		{"name": "anthropic", "generate": "claude-tools", "stream": "claude-tools", "said": toolSentence},
		{"name": "bedrock", "generate": "nova-generate", "stream": "nova-stream", "said": toolSentence},
	})
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "FNGATE_BASE_URL="+srv.URL+"/v1", "FNGATE_KEY="+vercelStoreKey, "FNGATE_STORE_BACKENDS="+string(list), "NO_COLOR=1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", filepath.Join("node", "store", "vercel_tool_turns.test.mjs"))
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Log(out.String())
	if err != nil {
		t.Log(logs.String())
		t.Fatalf("node --test: %v", err)
	}

	// What resolving the reference gave each backend: turn 1's sentence before its call.
	resolved := 0
	for _, r := range an.Requests() {
		var msgs []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if r.Field("messages", &msgs) != nil {
			continue
		}
		for _, m := range msgs {
			if m.Role == "assistant" && len(m.Content) == 2 && m.Content[0].Text == toolSentence && m.Content[1].Type == "tool_use" {
				resolved++
			}
		}
	}
	if resolved != 2 {
		t.Errorf("%d Anthropic requests carried turn 1's sentence and call back, want 2 (generated, streamed)", resolved)
	}
	resolved = 0
	for _, r := range br.Requests() {
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Text    *string         `json:"text"`
					ToolUse json.RawMessage `json:"toolUse"`
				} `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(r.Body, &body) != nil {
			continue
		}
		for _, m := range body.Messages {
			if m.Role == "assistant" && len(m.Content) == 2 && m.Content[0].Text != nil && *m.Content[0].Text == toolSentence && m.Content[1].ToolUse != nil {
				resolved++
			}
		}
	}
	if resolved != 2 {
		t.Errorf("%d Bedrock requests carried turn 1's sentence and call back, want 2 (generated, streamed)", resolved)
	}
}
