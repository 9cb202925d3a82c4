// Package providers defines what the gateway needs from a provider (translate, call upstream,
// stream back normalized deltas, classify failures) and the HTTP and SSE helpers they share.
// Each wire lives in its own subpackage; a platform main registers only those it ships.
package providers

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
)

// Target is where one attempt goes: the route's upstream model and the gateway model's settings
// a translation may need.
type Target struct {
	Model string // upstream model id (route.model)
	API   string // route.api: a sub-API on connections that serve several
	// MaxOutputTokens is the gateway model's ceiling (0 when unset), for providers that demand
	// an output maximum when the client sent none.
	MaxOutputTokens int
}

// Provider serves chat completions for one connection. Implementations are safe for
// concurrent use.
type Provider interface {
	// Name is the provider's display name in messages ("Anthropic", "Amazon Bedrock").
	Name() string
	// CheckChat reports why this provider cannot serve req on t (a 400 naming the param), or
	// nil. The planner skips routes that refuse; it is called before any network I/O.
	CheckChat(req *openai.ChatRequest, t Target) *openai.Error
	// Chat makes one non-streaming call. Failures are *Error.
	Chat(ctx context.Context, req *openai.ChatRequest, t Target) (*openai.Completion, error)
	// ChatStream starts one streaming call. Failures before the stream opens, and failures
	// returned by Next, are *Error.
	ChatStream(ctx context.Context, req *openai.ChatRequest, t Target) (Stream, error)
}

// RouteChecker is implemented by providers that can tell, with no request and no network,
// that a route can never be served (the mock knows every model it has). The gateway asks once
// per route when it is built, so such a route stops the start instead of failing the first
// request that plans it.
type RouteChecker interface {
	CheckRoute(t Target) error
}

// CompletionProvider is implemented by providers that can serve the legacy /v1/completions.
type CompletionProvider interface {
	// CheckCompletion returns nil, a 400 for a request this route refuses, or the 501
	// unsupported_endpoint when the route cannot serve completions at all.
	CheckCompletion(req *openai.CompletionRequest, t Target) *openai.Error
	Complete(ctx context.Context, req *openai.CompletionRequest, t Target) (*openai.Completion, error)
	CompleteStream(ctx context.Context, req *openai.CompletionRequest, t Target) (Stream, error)
}

// Stream yields the deltas of one streamed answer.
type Stream interface {
	// Next returns the next delta. It returns io.EOF only after the upstream signalled a
	// proper end (OpenAI [DONE], Anthropic message_stop, Bedrock metadata...); an upstream that
	// just stops is a stream_broken *Error, never a success.
	Next() (openai.Delta, error)
	// Close releases the upstream connection; safe to call more than once.
	Close() error
}

// Pending is implemented by streams that can tell whether their next delta is already in
// hand. The gateway then defers the flush to the client until the upstream goes quiet: each
// token still leaves as soon as nothing is queued behind it, but an upstream that delivers a
// burst costs one write to the client instead of one per event.
type Pending interface {
	Pending() bool
}

// Env is what a provider factory gets from the gateway.
type Env struct {
	// HTTPClient is shared by all HTTP providers; tuned for long-lived functions.
	HTTPClient *http.Client
	// Timeouts apply to upstream calls (connect is baked into HTTPClient).
	Timeouts config.Timeouts
	// Now is the clock.
	Now func() time.Time
}

// Factory builds the provider of one connection.
type Factory func(conn *config.Connection, env Env) (Provider, error)

// Registry maps a connection kind to its factory. Each main builds its own, so a binary
// carries only the provider packages it registers.
type Registry map[string]Factory

// Kinds lists the registered kinds, sorted.
func (r Registry) Kinds() []string {
	ks := make([]string, 0, len(r))
	for k := range r {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Build creates the provider for conn.
func (r Registry) Build(conn *config.Connection, env Env) (Provider, error) {
	f, ok := r[conn.Kind]
	if !ok {
		return nil, fmt.Errorf("connection %s: kind %q is not built into this binary (built in: %v)", conn.Name, conn.Kind, r.Kinds())
	}
	p, err := f(conn, env)
	if err != nil {
		return nil, fmt.Errorf("connection %s (%s): %w", conn.Name, conn.Kind, err)
	}
	return p, nil
}
