package crossroute

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/vertex"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/vertexfake"
)

const bedrockModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

type backends struct {
	anthropic *anthropicfake.Server
	bedrock   *bedrockfake.Server
	vertex    *vertexfake.Server
	srv       *gatewaytest.Server
	logs      *gatewaytest.LogBuffer
}

func start(t *testing.T) *backends {
	t.Helper()
	// The AWS SDK reads its credentials from the environment, pointed here at files of the
	// test's own, so nothing of the machine's is used and nothing leaves it.
	awstest.Isolate(t, "AKIDCROSSROUTE", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	b := &backends{anthropic: anthropicfake.New(), bedrock: bedrockfake.Start(), vertex: vertexfake.New()}
	t.Cleanup(b.anthropic.Close)
	t.Cleanup(b.bedrock.Close)
	t.Cleanup(b.vertex.Close)
	b.bedrock.AccessKeyID = "AKIDCROSSROUTE"
	cfg := gatewaytest.Config(t, fmt.Sprintf(`
connections:
  claude: {kind: anthropic, api_key: %s, base_url: %s}
  aws: {kind: bedrock, region: us-east-1, endpoint: %s}
  gcp: {kind: vertex, project: fngate-test, location: europe-west4, endpoint: %s, insecure: true}
models:
  gw/claude:
    price: {input_per_mtok: 3.0, output_per_mtok: 15.0, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75}
    routing: {policy: ordered, max_attempts: 3}
    routes:
      - {connection: claude, model: claude-sonnet-4-5}
      - {connection: aws, model: %s}
      - {connection: gcp, model: claude-sonnet-4-5@20250929}
`, anthropicfake.APIKey, b.anthropic.URL, b.bedrock.URL, b.vertex.Addr, bedrockModel), config.Options{})
	reg := providers.Registry{}
	anthropic.Register(reg)
	bedrock.Register(reg, sdkconfig.Load)
	vertex.Register(reg)
	b.logs = &gatewaytest.LogBuffer{}
	b.srv = gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: b.logs.Logger()})
	return b
}

// attempts returns the gateway's attempt lines (attempt and provider_error), in order.
func (b *backends) attempts() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && (line["msg"] == record.MsgAttempt || line["msg"] == record.MsgProviderError) {
			out = append(out, line)
		}
	}
	return out
}

var answer = &anthropicfake.Answer{
	Blocks:     []anthropicfake.Block{anthropicfake.Text("served by Vertex AI")},
	StopReason: "end_turn",
	Usage:      anthropicfake.Usage{Input: 100, CacheRead: 1000, CacheCreation: 200, Output: 50},
}

// TestMessagesFailOverAcrossBackendsBeforeOutput: Anthropic overloaded (529), Bedrock
// throttled: Vertex AI answers, and the client sees its answer only, streamed or not. Each
// attempt is logged with its outcome; the one that served is charged for its cache reads and
// writes at their prices.
func TestMessagesFailOverAcrossBackendsBeforeOutput(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			b := start(t)
			b.anthropic.Enqueue(anthropicfake.Overloaded())
			b.bedrock.Script(bedrockModel, bedrockfake.Answer{Error: &bedrockfake.Exception{Type: "ThrottlingException", Message: "Too many requests"}})
			b.vertex.Enqueue(vertexfake.Reply{Claude: answer})
			c := b.srv.Anthropic()
			params := sdk.MessageNewParams{Model: "gw/claude", MaxTokens: 100, Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Which backend?"))}}
			var msg sdk.Message
			if stream {
				s := c.Messages.NewStreaming(context.Background(), params)
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := c.Messages.New(context.Background(), params)
				if err != nil {
					t.Fatal(err)
				}
				msg = *m
			}
			if len(msg.Content) != 1 || msg.Content[0].Text != "served by Vertex AI" || msg.Model != "gw/claude" {
				t.Errorf("answer %s", msg.RawJSON())
			}
			if u := msg.Usage; u.InputTokens != 100 || u.CacheReadInputTokens != 1000 || u.CacheCreationInputTokens != 200 || u.OutputTokens != 50 {
				t.Errorf("usage %+v", u)
			}
			got := b.attempts()
			want := []struct{ route, outcome, class string }{
				{"claude/claude-sonnet-4-5", record.OutcomeFailover, "overloaded"},
				{"aws/" + bedrockModel, record.OutcomeFailover, "rate_limited"},
				{"gcp/claude-sonnet-4-5@20250929", record.OutcomeOK, ""},
			}
			if len(got) != len(want) {
				t.Fatalf("%d attempts logged, want 3:\n%s", len(got), b.logs.String())
			}
			for i, w := range want {
				class, _ := got[i]["error_class"].(string)
				if got[i]["route"] != w.route || got[i]["outcome"] != w.outcome || class != w.class || got[i]["endpoint"] != "messages" {
					t.Errorf("attempt %d: %v, want %+v", i+1, got[i], w)
				}
			}
			// (1300 - 1000 - 200) input at $3, 1000 cache reads at $0.30, 200 cache writes at
			// $3.75 and 50 output at $15, per million.
			wantCost := (100*3.0 + 1000*0.3 + 200*3.75 + 50*15.0) / 1e6
			if c, _ := got[2]["cost_usd"].(float64); c < wantCost*0.999 || c > wantCost*1.001 {
				t.Errorf("cost %v, want %v", got[2]["cost_usd"], wantCost)
			}
		})
	}
}

// TestMessagesNoFailoverAfterOutput: once Anthropic's answer began, its failure ends the
// stream with an error event (no message_stop), and no other backend is asked.
func TestMessagesNoFailoverAfterOutput(t *testing.T) {
	b := start(t)
	events := anthropicfake.Truncate(answer.Events("claude-sonnet-4-5"), 1)
	b.anthropic.Enqueue(anthropicfake.Reply{Events: append(events, anthropicfake.Event{Name: "error",
		Data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})})
	r := b.srv.Do(t, http.MethodPost, "/v1/messages", `{"model":"gw/claude","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		"Anthropic-Version", "2023-06-01")
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "event: error") || strings.Contains(body, "message_stop") || r.Header.Get(gateway.HeaderAttempts) != "1" {
		t.Errorf("%d %v\n%s", r.Status, r.Header, body)
	}
	if len(b.bedrock.Requests()) != 0 || b.vertex.Last() != nil {
		t.Error("a backend was asked after output began")
	}
}

// TestResponsesFailOverAcrossBackendsBeforeOutput: the same three backends behind the
// Responses door, driven by openai-go: Anthropic overloaded (529), Bedrock throttled, Vertex
// AI answers, whole and streamed, and the client sees only its answer, with its usage in the
// Responses shape (input_tokens the whole prompt, cached_tokens its cache reads). Each
// attempt is logged with its outcome and the door's endpoint, and the one that served is
// charged as on the Messages door.
func TestResponsesFailOverAcrossBackendsBeforeOutput(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			b := start(t)
			b.anthropic.Enqueue(anthropicfake.Overloaded())
			b.bedrock.Script(bedrockModel, bedrockfake.Answer{Error: &bedrockfake.Exception{Type: "ThrottlingException", Message: "Too many requests"}})
			b.vertex.Enqueue(vertexfake.Reply{Claude: answer})
			c := b.srv.OpenAI()
			params := responses.ResponseNewParams{Model: "gw/claude", MaxOutputTokens: oai.Int(100),
				Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Which backend?")}}
			var resp responses.Response
			if stream {
				s := gatewaytest.StreamResponse(t, c, params)
				if last := s.Types[len(s.Types)-1]; last != "response.completed" || s.Text != "served by Vertex AI" {
					t.Errorf("stream %v %q", s.Types, s.Text)
				}
				resp = s.Final
			} else {
				r, err := c.Responses.New(context.Background(), params)
				if err != nil {
					t.Fatal(err)
				}
				resp = *r
			}
			if resp.OutputText() != "served by Vertex AI" || resp.Model != "gw/claude" || resp.Status != responses.ResponseStatusCompleted {
				t.Errorf("answer %s", resp.RawJSON())
			}
			if u := resp.Usage; u.InputTokens != 1300 || u.InputTokensDetails.CachedTokens != 1000 || u.OutputTokens != 50 || u.TotalTokens != 1350 {
				t.Errorf("usage %s", resp.JSON.Usage.Raw())
			}
			got := b.attempts()
			want := []struct{ route, outcome, class string }{
				{"claude/claude-sonnet-4-5", record.OutcomeFailover, "overloaded"},
				{"aws/" + bedrockModel, record.OutcomeFailover, "rate_limited"},
				{"gcp/claude-sonnet-4-5@20250929", record.OutcomeOK, ""},
			}
			if len(got) != len(want) {
				t.Fatalf("%d attempts logged, want 3:\n%s", len(got), b.logs.String())
			}
			for i, w := range want {
				class, _ := got[i]["error_class"].(string)
				if got[i]["route"] != w.route || got[i]["outcome"] != w.outcome || class != w.class || got[i]["endpoint"] != "responses" {
					t.Errorf("attempt %d: %v, want %+v", i+1, got[i], w)
				}
			}
			wantCost := (100*3.0 + 1000*0.3 + 200*3.75 + 50*15.0) / 1e6
			if c, _ := got[2]["cost_usd"].(float64); c < wantCost*0.999 || c > wantCost*1.001 {
				t.Errorf("cost %v, want %v", got[2]["cost_usd"], wantCost)
			}
		})
	}
}

// TestResponsesNoFailoverAfterOutput: once Anthropic's answer began on the Responses door,
// its failure ends the stream with error and response.failed (no response.completed), and
// no other backend is asked.
func TestResponsesNoFailoverAfterOutput(t *testing.T) {
	b := start(t)
	events := anthropicfake.Truncate(answer.Events("claude-sonnet-4-5"), 1)
	b.anthropic.Enqueue(anthropicfake.Reply{Events: append(events, anthropicfake.Event{Name: "error",
		Data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})})
	r := b.srv.Do(t, http.MethodPost, "/v1/responses", `{"model":"gw/claude","max_output_tokens":100,"stream":true,"input":"hi"}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "event: error") || !strings.Contains(body, "event: response.failed") ||
		strings.Contains(body, "response.completed") || r.Header.Get(gateway.HeaderAttempts) != "1" {
		t.Errorf("%d %v\n%s", r.Status, r.Header, body)
	}
	if len(b.bedrock.Requests()) != 0 || b.vertex.Last() != nil {
		t.Error("a backend was asked after output began")
	}
}
