// Package mock is a built-in provider with no network: deterministic answers streamed word by
// word, for client integration tests, demos and benchmarks of the gateway itself.
//
// The route's model picks the behaviour:
//
//	echo        repeats the last user message
//	lorem       a fixed 64-word text
//	tools       calls the first offered tool (or the one tool_choice names) with arguments
//	            built from its schema; after a tool result, answers with that result
//	error:NNN   fails with upstream status NNN before any output (a failover demo)
//	cut:N       streams N words, then breaks off the stream
//	panic       panics before any output (proves a bug cannot take the instance down)
//	panic:N     streams N words, then panics
//
// Connection settings: delay_ms (pause before each streamed word).
package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// Kind is the connection kind.
const Kind = "mock"

// Register adds the mock kind to r.
func Register(r providers.Registry) { r[Kind] = New }

// Provider is the mock connection.
type Provider struct {
	delay time.Duration
}

// New builds a mock provider.
func New(conn *config.Connection, _ providers.Env) (providers.Provider, error) {
	p := &Provider{}
	if v := conn.ExtraString("delay_ms"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("delay_ms must be a non-negative integer, got %q", v)
		}
		p.delay = time.Duration(ms) * time.Millisecond
	}
	return p, nil
}

// Name is the display name.
func (p *Provider) Name() string { return "Mock" }

const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. " +
	"Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. " +
	"Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. " +
	"Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum and more."

// CheckRoute refuses a route model the mock does not know, so a typo stops the start.
func (p *Provider) CheckRoute(t providers.Target) error {
	_, _, err := parseBehaviour(t.Model)
	return err
}

// CheckChat refuses route models it does not know, for callers that skipped CheckRoute.
func (p *Provider) CheckChat(_ *openai.ChatRequest, t providers.Target) *openai.Error {
	if _, _, err := parseBehaviour(t.Model); err != nil {
		return openai.BadRequest("model", err.Error())
	}
	return nil
}

// CheckCompletion: the mock serves completions with the same behaviours.
func (p *Provider) CheckCompletion(_ *openai.CompletionRequest, t providers.Target) *openai.Error {
	return p.CheckChat(nil, t)
}

func parseBehaviour(model string) (name string, n int, err error) {
	name, arg, _ := strings.Cut(model, ":")
	switch name {
	case "echo", "lorem", "tools":
		return name, 0, nil
	case "panic":
		if model == "panic" {
			return name, 0, nil
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return "", 0, fmt.Errorf("mock model %q: panic takes no argument or a word count (panic, panic:3)", model)
		}
		return name, n, nil
	case "error", "cut":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || (name == "error" && (n < 400 || n > 599)) {
			return "", 0, fmt.Errorf("mock model %q: %s needs a number (error:503, cut:5)", model, name)
		}
		return name, n, nil
	}
	return "", 0, fmt.Errorf("unknown mock model %q: use echo, lorem, tools, error:NNN, cut:N, panic or panic:N", model)
}

// answer is the whole deterministic answer for a request.
type answer struct {
	words     []string
	toolCalls []openai.ToolCall
	cutAfter  int // -1: never
	// panicAfter is the word count after which the stream panics; -1: never. A panic before
	// any output happens when the call starts.
	panicAfter int
	fail       int // upstream status to fail with, 0: none
	prompt     int
}

func (p *Provider) plan(req *openai.ChatRequest, model string, maxTokens *int) answer {
	name, n, _ := parseBehaviour(model)
	a := answer{cutAfter: -1, panicAfter: -1}
	var last string
	for i := range req.Messages {
		m := &req.Messages[i]
		a.prompt += len(strings.Fields(m.Text()))
		if m.Role == openai.RoleUser {
			last = m.Text()
		}
	}
	switch name {
	case "echo":
		a.words = strings.Fields(last)
		if len(a.words) == 0 {
			a.words = []string{"(empty)"}
		}
	case "lorem":
		a.words = strings.Fields(lorem)
	case "tools":
		a.toolCalls, a.words = toolAnswer(req, last)
	case "error":
		a.fail = n
	case "cut":
		a.words = strings.Fields(lorem)
		a.cutAfter = n
	case "panic":
		a.words = strings.Fields(lorem)
		a.panicAfter = n
	}
	if maxTokens != nil && len(a.words) > *maxTokens {
		a.words = a.words[:*maxTokens]
	}
	return a
}

func toolAnswer(req *openai.ChatRequest, last string) ([]openai.ToolCall, []string) {
	msgs := req.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == openai.RoleTool {
		return nil, strings.Fields("The tool returned: " + msgs[n-1].Text())
	}
	if len(req.Tools) == 0 || req.ToolChoice != nil && req.ToolChoice.Mode == openai.ToolChoiceNone {
		return nil, strings.Fields("No tool to call. You said: " + last)
	}
	fn := &req.Tools[0].Function
	if req.ToolChoice != nil && req.ToolChoice.Mode == openai.ToolChoiceFunction {
		for i := range req.Tools {
			if req.Tools[i].Function.Name == req.ToolChoice.Function {
				fn = &req.Tools[i].Function
			}
		}
	}
	return []openai.ToolCall{{ID: "call_mock_0", Type: "function", Function: openai.FunctionCall{Name: fn.Name, Arguments: argumentsFor(fn.Parameters, last)}}}, nil
}

// argumentsFor fills each schema property with a value of its type.
func argumentsFor(schema json.RawMessage, text string) string {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make(map[string]any, len(keys))
	for _, k := range keys {
		switch s.Properties[k].Type {
		case "number", "integer":
			args[k] = 1
		case "boolean":
			args[k] = true
		case "array":
			args[k] = []any{}
		case "object":
			args[k] = map[string]any{}
		default:
			args[k] = text
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}

func (a *answer) usage() openai.Usage {
	out := len(a.words)
	for _, tc := range a.toolCalls {
		out += len(strings.Fields(tc.Function.Arguments))
	}
	return *(&openai.Usage{PromptTokens: openai.Int(a.prompt), CompletionTokens: openai.Int(out)}).WithTotal()
}

func (a *answer) finish() string {
	if len(a.toolCalls) > 0 {
		return openai.FinishToolCalls
	}
	return openai.FinishStop
}

func upstreamError(status int) error {
	return &providers.Error{Class: providers.ClassifyStatus(status), Status: status, Provider: "Mock",
		Code: "mock_" + strconv.Itoa(status), Message: "mock failure " + strconv.Itoa(status) + " " + http.StatusText(status)}
}

// Chat answers at once.
func (p *Provider) Chat(ctx context.Context, req *openai.ChatRequest, t providers.Target) (*openai.Completion, error) {
	a := p.plan(req, t.Model, req.MaxCompletionTokens)
	return a.complete()
}

func (a *answer) complete() (*openai.Completion, error) {
	if a.panicAfter >= 0 {
		panic("mock panic")
	}
	if a.fail != 0 {
		return nil, upstreamError(a.fail)
	}
	if a.cutAfter >= 0 {
		return nil, &providers.Error{Class: providers.Unavailable, Status: 502, Provider: "Mock", Message: "mock cut"}
	}
	c := &openai.Completion{ToolCalls: a.toolCalls, FinishReason: a.finish(), Usage: a.usage()}
	if len(a.words) > 0 || len(a.toolCalls) == 0 {
		text := strings.Join(a.words, " ")
		c.Content = &text
	}
	return c, nil
}

// ChatStream streams the answer word by word.
func (p *Provider) ChatStream(ctx context.Context, req *openai.ChatRequest, t providers.Target) (providers.Stream, error) {
	a := p.plan(req, t.Model, req.MaxCompletionTokens)
	if a.panicAfter == 0 {
		panic("mock panic before output")
	}
	if a.fail != 0 {
		return nil, upstreamError(a.fail)
	}
	return &stream{ctx: ctx, a: a, delay: p.delay}, nil
}

// Complete serves a legacy completion: the prompt plays the last user message.
func (p *Provider) Complete(ctx context.Context, req *openai.CompletionRequest, t providers.Target) (*openai.Completion, error) {
	return p.Chat(ctx, promptAsChat(req), t)
}

// CompleteStream streams a legacy completion.
func (p *Provider) CompleteStream(ctx context.Context, req *openai.CompletionRequest, t providers.Target) (providers.Stream, error) {
	return p.ChatStream(ctx, promptAsChat(req), t)
}

func promptAsChat(req *openai.CompletionRequest) *openai.ChatRequest {
	return &openai.ChatRequest{Model: req.Model, MaxCompletionTokens: req.MaxTokens,
		Messages: []openai.Message{{Role: openai.RoleUser, Content: req.Prompt}}}
}

type stream struct {
	ctx   context.Context
	a     answer
	delay time.Duration
	i     int
	tool  bool
	done  bool
}

func (s *stream) Next() (openai.Delta, error) {
	if s.done {
		return openai.Delta{}, io.EOF
	}
	if err := s.wait(); err != nil {
		return openai.Delta{}, err
	}
	if !s.tool && len(s.a.toolCalls) > 0 {
		s.tool = true
		calls := make([]openai.ToolCallDelta, len(s.a.toolCalls))
		for i, tc := range s.a.toolCalls {
			calls[i] = openai.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		}
		return openai.Delta{ToolCalls: calls}, nil
	}
	if s.a.panicAfter >= 0 && s.i >= s.a.panicAfter {
		panic("mock panic after " + strconv.Itoa(s.i) + " words")
	}
	if s.a.cutAfter >= 0 && s.i >= s.a.cutAfter {
		return openai.Delta{}, &providers.Error{Class: providers.StreamBroken, Provider: "Mock", Message: "mock cut after " + strconv.Itoa(s.i) + " words"}
	}
	if s.i < len(s.a.words) {
		w := s.a.words[s.i]
		if s.i > 0 {
			w = " " + w
		}
		s.i++
		return openai.Delta{Content: w}, nil
	}
	s.done = true
	u := s.a.usage()
	return openai.Delta{FinishReason: s.a.finish(), Usage: &u}, nil
}

func (s *stream) wait() error {
	if s.delay == 0 {
		return s.ctx.Err()
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *stream) Close() error { return nil }

var _ providers.CompletionProvider = (*Provider)(nil)
