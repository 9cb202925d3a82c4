// Package providers defines what the gateway needs from a provider (translate, call upstream,
// stream back normalized deltas, classify failures) and the HTTP and SSE helpers they share,
// with the bounds on what is read of an upstream (httpx.go: MaxAnswer, MaxErrorBody), the
// refusals of the extended profile's fields a route lacks (extended.go), what several
// routes' Checks share (refuse.go: the Responses-only refusal, OnlyClearsThinking,
// ValidBase64) and the answer tool that gives a JSON response_format on backends without
// native structured output (answertool.go).
// Each wire lives in its own subpackage; a platform main registers only those it ships.
package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
)

// Target is where one attempt goes: the route's upstream model and the gateway model's settings
// a translation may need.
type Target struct {
	Model string // upstream model id (route.model)
	API   string // route.api: a sub-API on connections that serve several
	// MaxOutputTokens is the gateway model's ceiling (0 when unset), for providers that demand
	// an output maximum when the client sent none.
	MaxOutputTokens int
	// Dimensions and Task are an embedding model's vector length and task (models.X.dimensions
	// and models.X.task); zero for a chat model.
	Dimensions int
	Task       string
}

// Provider serves one connection. Implementations are safe for concurrent use.
//
// The gateway asks Check once per route, before any network I/O, and plans around its answer;
// Generate and Stream then trust it and do not check again.
type Provider interface {
	// Name is the provider's display name in messages ("Anthropic", "Amazon Bedrock").
	Name() string
	// Check reports why this route cannot serve req as asked: a 400 naming the field it
	// cannot honour, or for an operation it lacks (req.Op) the 501 unsupported_endpoint; nil
	// when it can.
	Check(req *llm.Request, t Target) *llm.Error
	// Generate makes one non-streaming call. Failures are *Error.
	Generate(ctx context.Context, req *llm.Request, t Target) (*llm.Answer, error)
	// Stream starts one streaming call. Failures before the stream opens, and failures
	// returned by Next, are *Error.
	Stream(ctx context.Context, req *llm.Request, t Target) (llm.Stream, error)
}

// RouteChecker is implemented by providers that can tell, with no request and no network,
// that a route can never be served (the mock knows every model it has). The gateway asks once
// per route when it is built, so such a route stops the start instead of failing the first
// request that plans it.
type RouteChecker interface {
	CheckRoute(t Target) error
}

// TokenCounter is implemented by providers that can count a request's input tokens exactly
// (Anthropic's count_tokens, Bedrock's CountTokens, Vertex AI's count-tokens). A provider
// whose routes differ returns ErrCannotCount for a route that cannot, and the gateway moves
// on without logging a failed attempt.
type TokenCounter interface {
	CountTokens(ctx context.Context, req *llm.Request, t Target) (int, error)
}

// ErrCannotCount is a TokenCounter's answer for a route it has no exact count for.
var ErrCannotCount = errors.New("providers: this route cannot count tokens")

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
