package vertexfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fngate/fngate/internal/anthropicfake"
)

// Answer is one scripted Gemini answer, which the fake renders either as one
// GenerateContentResponse or as the messages StreamGenerateContent would send for it, so a
// stream and a non-stream call can be compared on the same answer.
type Answer struct {
	// Thought is a thought part before the answer, which a gateway must not return.
	Thought string
	Text    string
	Calls   []Call
	// Finish is the candidate's finish reason; STOP when unset (also after calls, as Gemini
	// does).
	Finish aiplatformpb.Candidate_FinishReason
	Usage  Usage
	// BlockReason blocks the prompt: no candidates, only promptFeedback.
	BlockReason aiplatformpb.GenerateContentResponse_PromptFeedback_BlockedReason
}

// Call is a function call; Args is a JSON object.
type Call struct {
	Name, Args string
}

// Usage is the final usageMetadata; zero counts are left out, as proto3 does.
type Usage struct {
	Prompt, Candidates, Thoughts, Cached int32
}

func (a *Answer) finish() aiplatformpb.Candidate_FinishReason {
	if a.Finish == aiplatformpb.Candidate_FINISH_REASON_UNSPECIFIED {
		return aiplatformpb.Candidate_STOP
	}
	return a.Finish
}

func (a *Answer) usage() *aiplatformpb.GenerateContentResponse_UsageMetadata {
	u := a.Usage
	return &aiplatformpb.GenerateContentResponse_UsageMetadata{
		PromptTokenCount: u.Prompt, CandidatesTokenCount: u.Candidates, ThoughtsTokenCount: u.Thoughts,
		CachedContentTokenCount: u.Cached, TotalTokenCount: u.Prompt + u.Candidates + u.Thoughts,
		TrafficType: aiplatformpb.GenerateContentResponse_UsageMetadata_ON_DEMAND,
	}
}

// early is the usageMetadata of every streamed message but the last: it counts nothing.
func early() *aiplatformpb.GenerateContentResponse_UsageMetadata {
	return &aiplatformpb.GenerateContentResponse_UsageMetadata{TrafficType: aiplatformpb.GenerateContentResponse_UsageMetadata_ON_DEMAND}
}

func (a *Answer) blocked() *aiplatformpb.GenerateContentResponse {
	return &aiplatformpb.GenerateContentResponse{
		PromptFeedback: &aiplatformpb.GenerateContentResponse_PromptFeedback{BlockReason: a.BlockReason,
			BlockReasonMessage: "The prompt was blocked."},
		UsageMetadata: &aiplatformpb.GenerateContentResponse_UsageMetadata{PromptTokenCount: a.Usage.Prompt, TotalTokenCount: a.Usage.Prompt},
		ModelVersion:  modelVersion, ResponseId: responseID,
	}
}

const (
	modelVersion = "gemini-fake-001"
	responseID   = "fake-response-01"
)

// Response renders the whole answer as GenerateContent returns it.
func (a *Answer) Response() *aiplatformpb.GenerateContentResponse {
	if a.BlockReason != aiplatformpb.GenerateContentResponse_PromptFeedback_BLOCKED_REASON_UNSPECIFIED {
		return a.blocked()
	}
	var parts []*aiplatformpb.Part
	if a.Thought != "" {
		parts = append(parts, &aiplatformpb.Part{Thought: true, Data: &aiplatformpb.Part_Text{Text: a.Thought}})
	}
	if a.Text != "" {
		parts = append(parts, text(a.Text))
	}
	for _, c := range a.Calls {
		parts = append(parts, c.part())
	}
	cand := &aiplatformpb.Candidate{FinishReason: a.finish(), SafetyRatings: a.ratings()}
	if len(parts) > 0 {
		cand.Content = &aiplatformpb.Content{Role: "model", Parts: parts}
	}
	return &aiplatformpb.GenerateContentResponse{Candidates: []*aiplatformpb.Candidate{cand},
		UsageMetadata: a.usage(), ModelVersion: modelVersion, ResponseId: responseID}
}

// Stream renders the answer as StreamGenerateContent sends it: the thought, the text a few
// words per message, each call whole in a message of its own, all with an empty
// usageMetadata, then a last message holding an empty text part, the finish reason and the
// real usage. A blocked prompt is one message without candidates.
func (a *Answer) Stream() []*aiplatformpb.GenerateContentResponse {
	if a.BlockReason != aiplatformpb.GenerateContentResponse_PromptFeedback_BLOCKED_REASON_UNSPECIFIED {
		return []*aiplatformpb.GenerateContentResponse{a.blocked()}
	}
	var out []*aiplatformpb.GenerateContentResponse
	msg := func(cand *aiplatformpb.Candidate) *aiplatformpb.GenerateContentResponse {
		return &aiplatformpb.GenerateContentResponse{Candidates: []*aiplatformpb.Candidate{cand},
			UsageMetadata: early(), ModelVersion: modelVersion, ResponseId: responseID}
	}
	content := func(p *aiplatformpb.Part) *aiplatformpb.Candidate {
		return &aiplatformpb.Candidate{Content: &aiplatformpb.Content{Role: "model", Parts: []*aiplatformpb.Part{p}}}
	}
	if a.Thought != "" {
		out = append(out, msg(content(&aiplatformpb.Part{Thought: true, Data: &aiplatformpb.Part_Text{Text: a.Thought}})))
	}
	for _, piece := range anthropicfake.SplitText(a.Text) {
		out = append(out, msg(content(text(piece))))
	}
	for _, c := range a.Calls {
		out = append(out, msg(content(c.part())))
	}
	last := content(text(""))
	last.FinishReason, last.SafetyRatings = a.finish(), a.ratings()
	final := msg(last)
	final.UsageMetadata = a.usage()
	return append(out, final)
}

// ratings marks the category that blocked a filtered answer, as Gemini does.
func (a *Answer) ratings() []*aiplatformpb.SafetyRating {
	if a.finish() != aiplatformpb.Candidate_SAFETY {
		return nil
	}
	return []*aiplatformpb.SafetyRating{{Category: aiplatformpb.HarmCategory_HARM_CATEGORY_DANGEROUS_CONTENT,
		Probability: aiplatformpb.SafetyRating_HIGH, Blocked: true}}
}

func text(s string) *aiplatformpb.Part {
	return &aiplatformpb.Part{Data: &aiplatformpb.Part_Text{Text: s}}
}

func (c Call) part() *aiplatformpb.Part {
	var m map[string]any
	if err := json.Unmarshal([]byte(c.Args), &m); err != nil {
		panic(fmt.Sprintf("vertexfake: call %s: args must be a JSON object: %v", c.Name, err))
	}
	args, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionCall{FunctionCall: &aiplatformpb.FunctionCall{Name: c.Name, Args: args}}}
}

// Status is a failure as Vertex AI reports it.
func Status(c codes.Code, msg string) error { return status.Error(c, msg) }

// Exhausted is the quota failure, with the retry delay Vertex AI attaches.
func Exhausted(retry time.Duration) error {
	st := status.New(codes.ResourceExhausted, "Resource exhausted. Please try again later.")
	st, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retry)})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

// Awkward cuts an event stream into HttpBody chunks where a careless reader breaks: inside
// every multi-byte UTF-8 character, right after every "data:", between the two newlines that
// end an event, and every 11 bytes elsewhere (inside JSON strings and numbers).
func Awkward(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 1; i < len(b); i++ {
		midRune := b[i]&0xC0 == 0x80 && b[i-1]&0xC0 == 0xC0
		if midRune || (b[i-1] == '\n' && b[i] == '\n') || bytes.HasSuffix(b[start:i], []byte("data:")) || i-start >= 11 {
			out = append(out, b[start:i])
			start = i
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
