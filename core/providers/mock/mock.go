// Package mock is a built-in provider with no network: deterministic answers streamed word by
// word, for client integration tests, demos and benchmarks of the gateway itself.
//
// The route's model picks the behaviour:
//
//	echo        repeats the last user message
//	lorem       a fixed 64-word text
//	tools       calls the first offered tool (or the one tool_choice names) with arguments
//	            built from its schema; after a tool result, answers with that result
//	tool:NAME   calls the offered tool named NAME, or else the one whose name ends with NAME
//	            (clients prefix the tools of MCP servers), with {}; tool:NAME:{...} with
//	            those arguments; after a tool result, answers with that result
//	error:NNN   fails with upstream status NNN before any output (a failover demo)
//	cut:N       streams N words, then breaks off the stream
//	panic       panics before any output (proves a bug cannot take the instance down)
//	panic:N     streams N words, then panics
//	embed       embedding models only: deterministic unit vectors (embeddings.go); error:NNN
//	            fails embeddings too
//
// Every behaviour honours the output settings of the extended profile as a backend would:
// max_tokens caps its words (finish length), stop cuts its text at the first stop sequence
// (finish stop), a JSON response_format makes an answer that would be text the JSON of a
// value its schema accepts (built by schemafill, the text in its strings), and seed, the
// penalties and participant names are accepted: its answers are deterministic already. Under
// json_object, echo answers a last user message that is itself a JSON object with that object
// as it was sent (so a client's integration test controls the JSON it gets back) and wraps any
// other text as {"text": ...}.
//
// Usage counts words: the prompt's (system and messages) as input, the answer's as output. A
// stream reports the input with its first content, as Anthropic and Gemini report the prompt
// at the start, and the whole usage with its stop; CountTokens gives the same input count.
//
// Connection settings: delay_ms (pause before each streamed word).
package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/schemafill"
	"github.com/fngate/fngate/core/llm"
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
	if t.Model == embedModel {
		return errors.New("mock model embed serves embeddings: give its gateway model kind: embedding and dimensions")
	}
	_, err := parseBehaviour(t.Model)
	return err
}

// Check refuses route models it does not know, for gateways that skipped CheckRoute. The
// mock stands in for every backend, so it takes every request the doors accept (completions
// too) and ignores the settings it has no use for (sampling, seed, penalties, participant
// names, thinking, reasoning effort, Anthropic's extras). What only OpenAI's own Responses API
// can run (its hosted tools, items and settings no other backend has) it refuses as every
// other translated route does, so a test against the mock shows what such routes will answer.
func (p *Provider) Check(req *llm.Request, t providers.Target) *llm.Error {
	if _, err := parseBehaviour(t.Model); err != nil {
		return llm.BadRequest("model", err.Error())
	}
	return providers.RefuseResponses(req, "Mock", true)
}

// behaviour is a route model parsed.
type behaviour struct {
	name string
	n    int
	// tool and args are tool:NAME[:ARGS]'s: the tool to call and its arguments as sent.
	tool, args string
}

func parseBehaviour(model string) (behaviour, error) {
	name, arg, _ := strings.Cut(model, ":")
	b := behaviour{name: name}
	switch name {
	case "echo", "lorem", "tools":
		return b, nil
	case "tool":
		tool, args, hasArgs := strings.Cut(arg, ":")
		// 128: the longest name a door takes, so no test waits on a call that cannot come.
		if !llm.ValidToolName(tool, 128) {
			return b, fmt.Errorf("mock model %q: tool needs a tool name (tool:get_weather, tool:get_weather:{\"city\":\"Paris\"})", model)
		}
		b.tool, b.args = tool, "{}"
		if hasArgs {
			if !isJSONObject(args) {
				return b, fmt.Errorf("mock model %q: the arguments after the tool's name must be a JSON object", model)
			}
			b.args = strings.TrimSpace(args)
		}
		return b, nil
	case "panic":
		if model == "panic" {
			return b, nil
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return b, fmt.Errorf("mock model %q: panic takes no argument or a word count (panic, panic:3)", model)
		}
		b.n = n
		return b, nil
	case "error", "cut":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || (name == "error" && (n < 400 || n > 599)) {
			return b, fmt.Errorf("mock model %q: %s needs a number (error:503, cut:5)", model, name)
		}
		b.n = n
		return b, nil
	}
	return b, fmt.Errorf("unknown mock model %q: use echo, lorem, tools, tool:NAME, tool:NAME:{ARGS}, error:NNN, cut:N, panic or panic:N (embed on embedding models)", model)
}

// answer is the whole deterministic answer for a request.
type answer struct {
	// words are the answer's text as streamed: each after the first starts with its space,
	// so they join into the text.
	words     []string
	toolCalls []llm.Part
	cutAfter  int // -1: never
	// panicAfter is the word count after which the stream panics; -1: never. A panic before
	// any output happens when the call starts.
	panicAfter int
	fail       int // upstream status to fail with, 0: none
	prompt     int
	truncated  bool   // the output maximum cut the words
	stopSeq    string // the stop sequence that cut the text
}

func (p *Provider) plan(req *llm.Request, model string) answer {
	b, _ := parseBehaviour(model)
	name, n := b.name, b.n
	a := answer{cutAfter: -1, panicAfter: -1}
	last := req.Prompt
	for i := range req.System {
		a.prompt += len(strings.Fields(req.System[i].Text))
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		a.prompt += len(strings.Fields(m.Text()))
		if m.Role == llm.RoleUser && m.HasText() {
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
	case "tool":
		a.toolCalls, a.words = namedToolAnswer(req, b.tool, b.args)
	case "error":
		a.fail = n
	case "cut":
		a.words = strings.Fields(lorem)
		a.cutAfter = n
	case "panic":
		a.words = strings.Fields(lorem)
		a.panicAfter = n
	}
	if req.ResponseFormat.JSON() && len(a.toolCalls) == 0 && a.words != nil {
		// One word: the JSON's strings keep their spacing.
		if name == "echo" && req.ResponseFormat.Type == llm.FormatJSONObject && isJSONObject(last) {
			a.words = []string{last}
		} else {
			a.words = []string{formatted(req.ResponseFormat, strings.Join(a.words, " "))}
		}
	}
	if req.MaxTokens != nil && len(a.words) > *req.MaxTokens {
		a.words = a.words[:*req.MaxTokens]
		a.truncated = true
	}
	for i := 1; i < len(a.words); i++ {
		a.words[i] = " " + a.words[i]
	}
	a.cutAtStop(req.Stop)
	return a
}

// formatted is the answer text as the JSON response_format asks for.
func formatted(f *llm.ResponseFormat, text string) string {
	if f.Type == llm.FormatJSONSchema {
		return schemafill.JSON(f.Schema, text)
	}
	return schemafill.JSON(nil, text)
}

// SchemaJSON is the mock's value for a JSON Schema (schemafill.JSON): compact JSON the schema
// accepts, with text in every free string. The fakes of the real APIs (internal/openaifake,
// internal/anthropicfake) build their structured answers and tool-call arguments with it, so
// every stand-in model agrees; it is exported for them, as Embedding is.
func SchemaJSON(schema []byte, text string) string { return schemafill.JSON(schema, text) }

// isJSONObject reports whether text is one JSON object, whitespace around it allowed.
func isJSONObject(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "{") && json.Valid([]byte(t))
}

// cutAtStop ends the text before the first of the stop sequences it holds, as a model's
// server does (the sequence itself is not returned).
func (a *answer) cutAtStop(stop []string) {
	if len(stop) == 0 {
		return
	}
	text := strings.Join(a.words, "")
	at, seq := -1, ""
	for _, s := range stop {
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at, seq = i, s
		}
	}
	if at < 0 {
		return
	}
	n := 0
	for i, w := range a.words {
		if n+len(w) >= at {
			a.words = append(a.words[:i:i], w[:at-n])
			if a.words[i] == "" {
				a.words = a.words[:i]
			}
			break
		}
		n += len(w)
	}
	a.truncated, a.stopSeq = false, seq
}

// afterResult is the answer to a conversation whose last message carries a tool result,
// nil when it does not.
func afterResult(req *llm.Request) []string {
	msgs := req.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		for _, p := range msgs[n-1].Parts {
			if p.Kind == llm.PartToolResult {
				return strings.Fields("The tool returned: " + resultText(&p))
			}
		}
	}
	return nil
}

func toolAnswer(req *llm.Request, last string) ([]llm.Part, []string) {
	if words := afterResult(req); words != nil {
		return nil, words
	}
	var fn *llm.Tool
	for i := range req.Tools {
		t := &req.Tools[i]
		if req.ToolChoice != nil && req.ToolChoice.Mode == llm.ToolChoiceTool {
			if t.Name == req.ToolChoice.Name {
				fn = t
				break
			}
			continue
		}
		// A server tool runs at Anthropic and a deferred one is not loaded yet: neither is
		// one a client could run for the mock.
		if fn == nil && t.Raw == nil && !t.DeferLoading {
			fn = t
		}
	}
	if fn == nil || req.ToolChoice != nil && req.ToolChoice.Mode == llm.ToolChoiceNone {
		return nil, strings.Fields("No tool to call. You said: " + last)
	}
	return []llm.Part{{Kind: llm.PartToolUse, ID: "call_mock_0", Name: fn.Name, Input: argumentsFor(fn.Parameters, last)}}, nil
}

// namedToolAnswer calls the offered tool named name, else the one whose name ends with name:
// a client offers an MCP server's tools under a prefix of its own (Claude Code's
// mcp__<server>__, Codex's namespace flattened by a translating door), which a route model
// written before the client's config cannot know. Of several that end with name, the first
// offered is called. The answer when none matches lists what was offered, so a failing test
// shows the names the client used.
func namedToolAnswer(req *llm.Request, name, args string) ([]llm.Part, []string) {
	if words := afterResult(req); words != nil {
		return nil, words
	}
	if req.ToolChoice != nil && req.ToolChoice.Mode == llm.ToolChoiceNone {
		return nil, strings.Fields("No tool to call: tool_choice is none.")
	}
	var exact, suffix, deferred *llm.Tool
	var offered []string
	for i := range req.Tools {
		t := &req.Tools[i]
		if t.Raw != nil {
			continue // a server tool: Anthropic runs it, no client could for the mock
		}
		offered = append(offered, t.Name)
		matches := t.Name == name || strings.HasSuffix(t.Name, name)
		switch {
		case !matches:
		case t.DeferLoading:
			// Not loaded yet: a backend would refuse the call as unknown.
			if deferred == nil {
				deferred = t
			}
		case t.Name == name:
			if exact == nil {
				exact = t
			}
		case suffix == nil:
			suffix = t
		}
	}
	fn := exact
	if fn == nil {
		fn = suffix
	}
	if fn == nil {
		if deferred != nil {
			return nil, strings.Fields("The tool " + deferred.Name + " is offered with defer_loading, not loaded yet.")
		}
		list := "none"
		if len(offered) > 0 {
			list = strings.Join(offered, ", ")
		}
		return nil, strings.Fields("No tool named " + name + " was offered. Offered: " + list + ".")
	}
	return []llm.Part{{Kind: llm.PartToolUse, ID: "call_mock_0", Name: fn.Name, Input: args}}, nil
}

// resultText is a tool result's text, whether it came as a string or as blocks.
func resultText(p *llm.Part) string {
	if p.Content == nil {
		return p.Text
	}
	m := llm.Message{Parts: p.Content}
	return m.Text()
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

func (a *answer) usage() llm.Usage {
	out := len(a.words)
	for _, tc := range a.toolCalls {
		out += len(strings.Fields(tc.Input))
	}
	return *(&llm.Usage{InputTokens: llm.Int(a.prompt), OutputTokens: llm.Int(out)}).WithTotal()
}

func (a *answer) stop() llm.StopReason {
	switch {
	case len(a.toolCalls) > 0:
		return llm.StopToolUse
	case a.truncated:
		return llm.StopMaxTokens
	case a.stopSeq != "":
		return llm.StopSequence
	}
	return llm.StopEnd
}

func upstreamError(status int) error {
	return &providers.Error{Class: providers.ClassifyStatus(status), Status: status, Provider: "Mock",
		Code: "mock_" + strconv.Itoa(status), Message: "mock failure " + strconv.Itoa(status) + " " + http.StatusText(status)}
}

// Generate answers at once. A legacy completion answers as a chat whose last user message is
// the prompt.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	a := p.plan(req, t.Model)
	if a.panicAfter >= 0 {
		panic("mock panic")
	}
	if a.fail != 0 {
		return nil, upstreamError(a.fail)
	}
	if a.cutAfter >= 0 {
		return nil, &providers.Error{Class: providers.Unavailable, Status: 502, Provider: "Mock", Message: "mock cut"}
	}
	out := &llm.Answer{Stop: a.stop(), StopSequence: a.stopSeq, Usage: a.usage()}
	if len(a.words) > 0 || len(a.toolCalls) == 0 {
		out.Parts = append(out.Parts, llm.Part{Kind: llm.PartText, Text: strings.Join(a.words, "")})
	}
	out.Parts = append(out.Parts, a.toolCalls...)
	return out, nil
}

// Stream streams the answer word by word.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	a := p.plan(req, t.Model)
	if a.panicAfter == 0 {
		panic("mock panic before output")
	}
	if a.fail != 0 {
		return nil, upstreamError(a.fail)
	}
	return &stream{ctx: ctx, a: a, delay: p.delay}, nil
}

type stream struct {
	ctx   context.Context
	a     answer
	delay time.Duration
	i     int
	tool  bool
	began bool // the first content went out, with the prompt's count
	done  bool
}

func (s *stream) Next() (llm.Delta, error) {
	if s.done {
		return llm.Delta{}, io.EOF
	}
	if err := s.wait(); err != nil {
		return llm.Delta{}, err
	}
	if !s.tool && len(s.a.toolCalls) > 0 {
		s.tool = true
		calls := make([]llm.ToolCallDelta, len(s.a.toolCalls))
		for i, tc := range s.a.toolCalls {
			calls[i] = llm.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Input}
		}
		return s.first(llm.Delta{ToolCalls: calls}), nil
	}
	if s.a.panicAfter >= 0 && s.i >= s.a.panicAfter {
		panic("mock panic after " + strconv.Itoa(s.i) + " words")
	}
	if s.a.cutAfter >= 0 && s.i >= s.a.cutAfter {
		return llm.Delta{}, &providers.Error{Class: providers.StreamBroken, Provider: "Mock", Message: "mock cut after " + strconv.Itoa(s.i) + " words"}
	}
	if s.i < len(s.a.words) {
		w := s.a.words[s.i]
		s.i++
		return s.first(llm.Delta{Text: w}), nil
	}
	s.done = true
	u := s.a.usage()
	return llm.Delta{Stop: s.a.stop(), StopSequence: s.a.stopSeq, Usage: &u}, nil
}

// first adds the prompt's count to the stream's first content.
func (s *stream) first(d llm.Delta) llm.Delta {
	if !s.began {
		s.began = true
		d.Usage = &llm.Usage{InputTokens: llm.Int(s.a.prompt)}
	}
	return d
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

// CountTokens counts the input as the mock's usage does: its words. A failing model fails
// the count as it fails an answer.
func (p *Provider) CountTokens(_ context.Context, req *llm.Request, t providers.Target) (int, error) {
	a := p.plan(req, t.Model)
	if a.fail != 0 {
		return 0, upstreamError(a.fail)
	}
	return a.prompt, nil
}
