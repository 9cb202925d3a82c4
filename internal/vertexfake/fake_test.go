package vertexfake

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fngate/fngate/internal/anthropicfake"
)

// TestAwkward: the chunks put back together are the stream, and they cut where a careless
// reader breaks: inside multi-byte characters, right after "data:", between the two
// newlines ending an event.
func TestAwkward(t *testing.T) {
	a := &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("Grüße 日本 🦊")}}
	sse := []byte(anthropicfake.SSE(a.Events("m")))
	parts := Awkward(sse)
	if !bytes.Equal(bytes.Join(parts, nil), sse) {
		t.Fatal("the chunks do not add up to the stream")
	}
	var midRune, afterData, midBlank int
	for i, p := range parts[:len(parts)-1] {
		next := parts[i+1]
		if !utf8.RuneStart(next[0]) {
			midRune++
		}
		if bytes.HasSuffix(p, []byte("data:")) {
			afterData++
		}
		if p[len(p)-1] == '\n' && next[0] == '\n' {
			midBlank++
		}
	}
	if midRune < 4 || afterData < 5 || midBlank < 5 {
		t.Errorf("cuts: %d mid-character, %d after data:, %d between newlines", midRune, afterData, midBlank)
	}
}

// TestAnswerStream: early messages carry an empty usageMetadata, calls come whole, and the
// last message has the finish reason and the real usage.
func TestAnswerStream(t *testing.T) {
	a := &Answer{Text: "one two three", Calls: []Call{{Name: "f", Args: `{"x":1}`}}, Usage: Usage{Prompt: 5, Candidates: 7}}
	msgs := a.Stream()
	if len(msgs) != 4 {
		t.Fatalf("%d messages", len(msgs))
	}
	for _, m := range msgs[:3] {
		if u := m.GetUsageMetadata(); u == nil || u.GetPromptTokenCount() != 0 || u.GetCandidatesTokenCount() != 0 {
			t.Errorf("early usage %v", u)
		}
		if m.GetCandidates()[0].GetFinishReason() != aiplatformpb.Candidate_FINISH_REASON_UNSPECIFIED {
			t.Error("finish reason before the end")
		}
	}
	if fc := msgs[2].GetCandidates()[0].GetContent().GetParts()[0].GetFunctionCall(); fc.GetName() != "f" || fc.GetArgs().GetFields()["x"].GetNumberValue() != 1 {
		t.Errorf("call %v", fc)
	}
	last := msgs[3]
	if last.GetCandidates()[0].GetFinishReason() != aiplatformpb.Candidate_STOP || last.GetUsageMetadata().GetPromptTokenCount() != 5 || last.GetUsageMetadata().GetTotalTokenCount() != 12 {
		t.Errorf("last %v", last)
	}
}

func content(role string, parts ...*aiplatformpb.Part) *aiplatformpb.Content {
	return &aiplatformpb.Content{Role: role, Parts: parts}
}

func call(name string) *aiplatformpb.Part {
	return &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionCall{FunctionCall: &aiplatformpb.FunctionCall{Name: name}}}
}

func response(name string) *aiplatformpb.Part {
	return &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionResponse{FunctionResponse: &aiplatformpb.FunctionResponse{
		Name: name, Response: &structpb.Struct{Fields: map[string]*structpb.Value{"content": structpb.NewStringValue("ok")}}}}}
}

// TestValidateGenerate: what Vertex AI refuses is refused, and a well-formed conversation
// passes.
func TestValidateGenerate(t *testing.T) {
	s := &Server{Project: Project, Location: Location}
	model := "projects/" + Project + "/locations/" + Location + "/publishers/google/models/gemini-2.5-flash"
	ok := &aiplatformpb.GenerateContentRequest{Model: model, Contents: []*aiplatformpb.Content{
		content("user", text("weather?")), content("model", call("a"), call("b")), content("user", response("a"), response("b"), text("thanks"))}}
	if msg := s.ValidateGenerate(ok); msg != "" {
		t.Fatalf("a valid request refused: %s", msg)
	}
	for _, tt := range []struct {
		name string
		req  *aiplatformpb.GenerateContentRequest
		want string
	}{
		{"other project", &aiplatformpb.GenerateContentRequest{Model: strings.Replace(model, Project, "other", 1), Contents: ok.Contents}, "resource name"},
		{"no contents", &aiplatformpb.GenerateContentRequest{Model: model}, "contents is not specified"},
		{"same role twice", &aiplatformpb.GenerateContentRequest{Model: model, Contents: []*aiplatformpb.Content{content("user", text("a")), content("user", text("b"))}}, "alternate"},
		{"empty text", &aiplatformpb.GenerateContentRequest{Model: model, Contents: []*aiplatformpb.Content{content("user", text(""))}}, "empty text"},
		{"missing response", &aiplatformpb.GenerateContentRequest{Model: model, Contents: []*aiplatformpb.Content{
			content("user", text("q")), content("model", call("a"), call("b")), content("user", response("a"))}}, "number of function response parts"},
		{"responses out of order", &aiplatformpb.GenerateContentRequest{Model: model, Contents: []*aiplatformpb.Content{
			content("user", text("q")), content("model", call("a"), call("b")), content("user", response("b"), response("a"))}}, "the call at that position"},
		{"allowed names without ANY", &aiplatformpb.GenerateContentRequest{Model: model, Contents: ok.Contents,
			Tools: []*aiplatformpb.Tool{{FunctionDeclarations: []*aiplatformpb.FunctionDeclaration{{Name: "a"}}}},
			ToolConfig: &aiplatformpb.ToolConfig{FunctionCallingConfig: &aiplatformpb.FunctionCallingConfig{
				Mode: aiplatformpb.FunctionCallingConfig_AUTO, AllowedFunctionNames: []string{"a"}}}}, "only allowed with mode ANY"},
		{"bad function name", &aiplatformpb.GenerateContentRequest{Model: model, Contents: ok.Contents,
			Tools: []*aiplatformpb.Tool{{FunctionDeclarations: []*aiplatformpb.FunctionDeclaration{{Name: "9a"}}}}}, "invalid function name"},
		{"schema of a string", &aiplatformpb.GenerateContentRequest{Model: model, Contents: ok.Contents,
			Tools: []*aiplatformpb.Tool{{FunctionDeclarations: []*aiplatformpb.FunctionDeclaration{{Name: "a",
				ParametersJsonSchema: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"type": structpb.NewStringValue("string")}})}}}}}, "must describe an object"},
	} {
		if msg := s.ValidateGenerate(tt.req); !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, msg, tt.want)
		}
	}
}

// TestValidateClaude: Vertex AI's Claude rules: anthropic_version in the body, no model, the
// stream flag matching the method, Anthropic's publisher.
func TestValidateClaude(t *testing.T) {
	s := &Server{Project: Project, Location: Location}
	endpoint := "projects/" + Project + "/locations/" + Location + "/publishers/anthropic/models/claude-sonnet-4-5"
	good := `{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		name, resource, body string
		stream               bool
		want                 string
	}{
		{"valid", endpoint, good, false, ""},
		{"model in the body", endpoint, `{"anthropic_version":"vertex-2023-10-16","model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, false, "model"},
		{"direct API version", endpoint, `{"anthropic_version":"2023-06-01","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, false, "anthropic_version"},
		{"stream flag missing", endpoint, good, true, "stream"},
		{"Google's publisher", strings.Replace(endpoint, "anthropic", "google", 1), good, false, "resource name"},
	} {
		msg := s.validateClaude(&Request{Method: "RawPredict", Resource: tt.resource, Body: []byte(tt.body), ContentType: "application/json"}, tt.stream)
		if tt.want == "" && msg != "" || tt.want != "" && !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, msg, tt.want)
		}
	}
}
