package vertex

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
	"github.com/fngate/fngate/internal/vertexfake"
)

type requestCase struct {
	Target struct {
		Model           string `json:"model"`
		API             string `json:"api"`
		MaxOutputTokens int    `json:"max_output_tokens"`
	} `json:"target"`
	// Door is the front door that decodes Request: "chat" (the default) or "messages".
	Door string `json:"door"`
	// Betas are the anthropic-beta flags of a Messages door request.
	Betas   []string        `json:"betas"`
	Request json.RawMessage `json:"request"`
}

// chat decodes a Chat Completions request as its door does.
func chat(t *testing.T, body string) *llm.Request {
	t.Helper()
	req, oe := openai.DecodeChatRequest([]byte(body), llm.Limits{})
	if oe != nil {
		t.Fatalf("not a valid OpenAI request: %v\n%s", oe, body)
	}
	return req
}

// anthropicMessages decodes a Messages request as its door does, with the anthropic-beta
// flags betas.
func anthropicMessages(t *testing.T, body string, betas ...string) *llm.Request {
	t.Helper()
	h := http.Header{"Anthropic-Version": {"2023-06-01"}}
	if len(betas) > 0 {
		h.Set("Anthropic-Beta", strings.Join(betas, ","))
	}
	req, oe := messages.Decode([]byte(body), h, llm.Limits{})
	if oe != nil {
		t.Fatalf("not a valid Messages request: %v\n%s", oe, body)
	}
	req.PassThrough = llm.WireAnthropic
	return req
}

// TestGeminiRequestGolden translates each request in testdata/gemini/request (a Chat
// Completions request unless the case names the Messages door) and compares the
// GenerateContentRequest, in the REST API's JSON, with its golden file. Every request must
// pass Check first, and the fake's copy of Vertex AI's validation after, so a golden file
// cannot enshrine a request Vertex AI would refuse.
func TestGeminiRequestGolden(t *testing.T) {
	fake := &vertexfake.Server{Project: vertexfake.Project, Location: vertexfake.Location}
	p := &Provider{project: vertexfake.Project, location: vertexfake.Location}
	for _, name := range golden.Cases(t, "gemini/request", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "gemini", "request", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var c requestCase
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			target := providers.Target{Model: c.Target.Model, API: c.Target.API, MaxOutputTokens: c.Target.MaxOutputTokens}
			if fam, _ := Classify(target); fam != Gemini {
				t.Fatalf("%s is not a gemini model", c.Target.Model)
			}
			var req *llm.Request
			switch c.Door {
			case "", "chat":
				req = chat(t, string(c.Request))
			case "messages":
				req = anthropicMessages(t, string(c.Request), c.Betas...)
			case "extended": // the chat door under request_profile: extended
				var oe *llm.Error
				if req, _, oe = openai.DecodeChatProfile(c.Request, llm.Limits{}, openai.Profile{Extended: true}); oe != nil {
					t.Fatal(oe)
				}
			default:
				t.Fatalf("door %q", c.Door)
			}
			if oe := p.Check(req, target); oe != nil {
				t.Fatalf("Check refused: %v", oe)
			}
			greq := buildGemini(req, p.geminiModel(target.Model), target)
			if msg := fake.ValidateGenerate(greq); msg != "" {
				t.Errorf("Vertex AI would refuse the request: %s", msg)
			}
			golden.CheckIndented(t, filepath.Join("testdata", "gemini", "request", name+".golden.json"), protoJSON(t, greq))
		})
	}
}

// TestCheckGemini: what a Gemini route refuses before any call, naming the param.
func TestCheckGemini(t *testing.T) {
	for _, tt := range []struct{ name, body, param string }{
		{"strict tool", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object"}}}]}`, "tools[0].function.strict"},
		{"name starting with a digit", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"9lives"}}]}`, "tools[0].function.name"},
		{"name starting with a dash", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"-x"}}]}`, "tools[0].function.name"},
		{"schema of a non-object", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"string"}}}]}`, "tools[0].function.parameters"},
		{"system message mid-conversation", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"system","content":"now rude"}]}`, "messages"},
		{"only system", `{"model":"m","messages":[{"role":"system","content":"be nice"}]}`, "messages"},
		{"empty user text", `{"model":"m","messages":[{"role":"user","content":""}]}`, "messages[0].content"},
		{"empty assistant text", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":""},{"role":"user","content":"hi"}]}`, "messages[1].content"},
		{"array arguments", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"[1]"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "messages[1].tool_calls[0].function.arguments"},
		{"broken arguments", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "messages[1].tool_calls[0].function.arguments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			oe := checkGemini(chat(t, tt.body), "gemini-2.5-flash")
			if oe == nil || oe.Status != 400 || oe.Param != tt.param {
				t.Fatalf("got %v, want a 400 naming %s", oe, tt.param)
			}
		})
	}
	if oe := checkGemini(chat(t, `{"model":"m","temperature":2,"messages":[{"role":"developer","content":"d"},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"_f_v2-x","parameters":{"properties":{}}}}]}`), "gemini-2.5-flash"); oe != nil {
		t.Errorf("refused a request Gemini accepts: %v", oe)
	}
}

// TestToolChoiceModes: OpenAI's tool_choice as Gemini's function calling modes.
func TestToolChoiceModes(t *testing.T) {
	for choice, want := range map[string]string{
		`"auto"`:     `{"mode":"AUTO"}`,
		`"required"`: `{"mode":"ANY"}`,
		`"none"`:     `{"mode":"NONE"}`,
		`{"type":"function","function":{"name":"get_time"}}`: `{"mode":"ANY","allowedFunctionNames":["get_time"]}`,
	} {
		req := chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_time"}}],"tool_choice":`+choice+`}`)
		greq := buildGemini(req, "projects/p/locations/l/publishers/google/models/m", providers.Target{Model: "m"})
		var got, exp any
		_ = json.Unmarshal(protoJSON(t, greq.GetToolConfig().GetFunctionCallingConfig()), &got)
		_ = json.Unmarshal([]byte(want), &exp)
		if gb, eb := mustMarshal(got), mustMarshal(exp); gb != eb {
			t.Errorf("tool_choice %s: %s, want %s", choice, gb, eb)
		}
	}
	// No tools: a tool_choice of none says nothing, and Gemini refuses a config without tools.
	greq := buildGemini(chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":"none"}`), "x", providers.Target{Model: "m"})
	if greq.GetToolConfig() != nil || greq.GetTools() != nil {
		t.Errorf("tool config without tools: %v", greq.GetToolConfig())
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestThoughtSignature: the stand-in signature is the decoding of Google's documented REST
// value, and only models newer than Gemini 2 get it.
func TestThoughtSignature(t *testing.T) {
	// What REST clients send, read as the REST surface reads bytes (base64, either alphabet),
	// must be exactly what this package sends over gRPC.
	var rest aiplatformpb.Part
	if err := protojson.Unmarshal([]byte(`{"thoughtSignature":"skip_thought_signature_validator"}`), &rest); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rest.GetThoughtSignature(), skipSignature) {
		t.Errorf("signature bytes %q, want %q", skipSignature, rest.GetThoughtSignature())
	}
	for model, want := range map[string]bool{
		"gemini-2.5-flash": false, "gemini-2.0-flash-001": false, "gemini-1.5-pro": false, "google/gemini-2.5-pro": false,
		"gemini-3-pro-preview": true, "gemini-3.1-flash": true, "my-tuned-model": true,
	} {
		if got := needsSignature(model); got != want {
			t.Errorf("needsSignature(%q) = %v", model, got)
		}
	}
}

// TestThinkingModels: a model that cannot think is sent no thinkingConfig: adaptive thinking
// and an effort are the model deciding not to think, and a budget is refused.
func TestThinkingModels(t *testing.T) {
	for model, want := range map[string]bool{
		"gemini-2.5-flash": true, "gemini-3-pro-preview": true, "my-tuned-model": true, "gemini-2.0-flash-thinking-exp-01-21": true,
		"gemini-2.0-flash-001": false, "google/gemini-2.0-flash-lite": false, "gemini-1.5-pro-002": false,
	} {
		if got := thinks(model); got != want {
			t.Errorf("thinks(%q) = %v", model, got)
		}
	}
	adaptive := anthropicMessages(t, `{"model":"gw","max_tokens":2000,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"},"messages":[{"role":"user","content":"hi"}]}`)
	budget := anthropicMessages(t, `{"model":"gw","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`)
	for _, tt := range []struct {
		model  string
		config string // the thinkingConfig of the adaptive request
	}{
		{"gemini-2.5-flash", `{"includeThoughts":true,"thinkingBudget":1024}`},
		{"gemini-2.0-flash-001", `null`},
	} {
		target := providers.Target{Model: tt.model}
		if oe := checkGemini(adaptive, tt.model); oe != nil {
			t.Fatalf("%s refused adaptive thinking: %v", tt.model, oe)
		}
		got := "null"
		if tc := buildGemini(adaptive, "m", target).GetGenerationConfig().GetThinkingConfig(); tc != nil {
			got = string(protoJSON(t, tc))
		}
		var a, b any
		_ = json.Unmarshal([]byte(got), &a)
		_ = json.Unmarshal([]byte(tt.config), &b)
		if mustMarshal(a) != mustMarshal(b) {
			t.Errorf("%s: thinking config %s, want %s", tt.model, got, tt.config)
		}
	}
	if oe := checkGemini(budget, "gemini-2.0-flash-001"); oe == nil || oe.Param != "thinking" {
		t.Errorf("a budget for a model that cannot think: %v", oe)
	}
}

// TestCloudStorageImages: no door produces them yet, but an image by gs:// URI is Gemini's
// fileData, its type taken from the media type or the extension; an unknown type is refused.
func TestCloudStorageImages(t *testing.T) {
	req := &llm.Request{LateSystem: llm.LateSystemHoist, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
		{Kind: llm.PartImage, URL: "gs://bucket/photos/cat.JPG"}, {Kind: llm.PartText, Text: "what is it?"}}}}}
	target := providers.Target{Model: "gemini-2.5-flash"}
	if oe := checkGemini(req, target.Model); oe != nil {
		t.Fatal(oe)
	}
	greq := buildGemini(req, "projects/"+vertexfake.Project+"/locations/"+vertexfake.Location+"/publishers/google/models/gemini-2.5-flash", target)
	fake := &vertexfake.Server{Project: vertexfake.Project, Location: vertexfake.Location}
	if msg := fake.ValidateGenerate(greq); msg != "" {
		t.Fatal(msg)
	}
	fd := greq.GetContents()[0].GetParts()[0].GetFileData()
	if fd.GetMimeType() != "image/jpeg" || fd.GetFileUri() != "gs://bucket/photos/cat.JPG" {
		t.Errorf("file data %v", fd)
	}
	req.Messages[0].Parts[0].URL = "gs://bucket/photos/cat"
	if oe := checkGemini(req, target.Model); oe == nil || oe.Param != "messages[0].content[0]" {
		t.Errorf("an image of unknown type: %v", oe)
	}
}
