package bedrock

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/bedrockfake"
)

// TestCountTokens: a Claude route counts through Bedrock's CountTokens, over the body its call
// would send (the invokeModel form on InvokeModel, the converse form for a Claude model forced
// onto Converse); other models are not counted, and Bedrock is not asked.
func TestCountTokens(t *testing.T) {
	p, f := fakeProvider(t)
	body := `{"model":"gw","system":"Be brief.","thinking":{"type":"enabled","budget_tokens":5000},
		"messages":[{"role":"user","content":"How long is this?"}]}`
	req, oe := messages.DecodeCountTokens([]byte(body), http.Header{"Anthropic-Version": {"2023-06-01"},
		"Anthropic-Beta": {"token-counting-2024-11-01,interleaved-thinking-2025-05-14"}}, llm.Limits{})
	if oe != nil {
		t.Fatal(oe)
	}
	plain := *req
	plain.Thinking = nil // Converse takes no thinking budget
	for _, tc := range []struct {
		name   string
		target providers.Target
		form   string
	}{
		{"invoke", providers.Target{Model: "us.anthropic.claude-count-v1:0"}, "invokeModel"},
		{"claude on converse", providers.Target{Model: "anthropic.claude-count-v1:0", API: apiConverse}, "converse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := req
			if tc.form == "converse" {
				req = &plain
			}
			if oe := p.Check(req, tc.target); oe != nil {
				t.Fatal(oe)
			}
			f.Script(tc.target.Model, bedrockfake.Answer{InputCount: 321})
			n, err := p.CountTokens(ctx, req, tc.target)
			if err != nil || n != 321 {
				t.Fatalf("count %d, %v (fake: %s)", n, err, f.Last().Invalid)
			}
			got := f.Last()
			var in struct {
				Input map[string]json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(got.Body, &in); err != nil || got.Op != bedrockfake.OpCountTokens || in.Input[tc.form] == nil {
				t.Fatalf("Bedrock got %s %s", got.Op, got.Body)
			}
			if tc.form != "invokeModel" {
				return
			}
			var im struct {
				Body []byte `json:"body"`
			}
			_ = json.Unmarshal(in.Input["invokeModel"], &im)
			var sent struct {
				MaxTokens int      `json:"max_tokens"`
				Betas     []string `json:"anthropic_beta"`
			}
			if err := json.Unmarshal(im.Body, &sent); err != nil {
				t.Fatal(err)
			}
			// max_tokens must exceed the thinking budget for Bedrock to take the body.
			if sent.MaxTokens != 5001 || len(sent.Betas) != 1 || sent.Betas[0] != "interleaved-thinking-2025-05-14" {
				t.Errorf("counted body %s", im.Body)
			}
		})
	}

	before := len(f.Requests())
	_, err := p.CountTokens(ctx, req, providers.Target{Model: "amazon.nova-pro-v1:0"})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Unsupported || !pe.Failover() {
		t.Errorf("a model CountTokens cannot count: %v", err)
	}
	if len(f.Requests()) != before {
		t.Error("Bedrock was asked to count a model it cannot count")
	}

	f.Script("us.anthropic.claude-busy-v1:0", bedrockfake.Answer{Error: &bedrockfake.Exception{Type: "ThrottlingException", Message: "slow down"}})
	_, err = p.CountTokens(ctx, req, providers.Target{Model: "us.anthropic.claude-busy-v1:0"})
	if !errors.As(err, &pe) || pe.Class != providers.RateLimited || pe.Status != 429 {
		t.Errorf("throttled count: %v", err)
	}
}
