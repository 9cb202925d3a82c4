package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/record"
)

// MCPOAuth is what /mcp needs of an OAuth protected resource (core/mcpauth's Verifier).
type MCPOAuth interface {
	// Subject verifies an access token and returns whom it was issued to.
	Subject(ctx context.Context, token string) (string, error)
	// Challenge answers a request without a token, or with one Subject refused (err).
	Challenge(w http.ResponseWriter, err error)
	// ServeMetadata serves the protected resource metadata, at MetadataPaths.
	ServeMetadata(w http.ResponseWriter, r *http.Request)
	MetadataPaths() []string
}

// mcpScope is the counters' scope of a key's tool calls: not a model glob's (those never
// begin with '@'; see config), so tool calls never share a counter with a model's requests.
const mcpScope = "@mcp"

// mcpWire is /mcp's wire before the MCP handler has the request: refusals of the HTTP layer
// (authentication, a busy instance) in OpenAI's error shape, which MCP leaves open.
type mcpWire struct{}

func (mcpWire) endpoint() string { return record.EndpointMCP }

func (mcpWire) writeError(w http.ResponseWriter, _ *requestCtx, e *llm.Error) {
	openai.WriteError(w, e)
}

// serveMCP authenticates a caller of /mcp and hands the request to the MCP handler with the
// caller in its context. Its request line is logged when the handler returns; each call it
// forwards has a line of its own.
func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	if g.mcp == nil {
		g.unknownURL(w, r)
		return
	}
	q := requestOf(g, w, r)
	q.open(mcpWire{}, requestID(q.r))
	g.startTrace(q.r, &q.rc)
	caller, ok := q.mcpCaller()
	if !ok {
		return
	}
	release, oe := g.slot()
	if oe != nil {
		q.refuse(oe)
		return
	}
	defer release()
	sw := &statusWriter{trackingWriter: &q.w, status: http.StatusOK}
	g.mcp.ServeHTTP(sw, q.r.WithContext(mcpcall.NewContext(q.r.Context(), caller)))
	status := sw.status
	if q.clientGone() && !q.w.wrote {
		// A client that has its answer may close the stream before the handler returns
		// (Codex does): that is an answered request, not a client that left.
		status = statusClientClosed
	}
	q.done(status, "", nil)
}

// mcpCaller finds who is calling: a gateway key, or with mcp_oauth an OAuth access token
// issued for this endpoint. When ok is false the client has its answer.
func (q *request) mcpCaller() (*mcpcall.Caller, bool) {
	g := q.g
	c := &mcpcall.Caller{RequestID: q.rc.id, CaptureContent: g.captureContent}
	token, _ := bearer(q.r.Header.Get("Authorization"))
	if g.mcpOAuth != nil && !g.open && looksLikeJWT(token) {
		sub, err := g.mcpOAuth.Subject(q.r.Context(), token)
		if err != nil {
			g.mcpOAuth.Challenge(&q.w, err)
			q.done(http.StatusUnauthorized, "", &llm.Error{Code: "invalid_token", Message: err.Error()})
			return nil, false
		}
		c.ID, c.Key = "oauth:"+sub, "oauth:"+sub
		c.Access = &g.mcpOAuthAccess
	} else {
		if g.mcpOAuth != nil && token == "" && q.r.Header.Get("X-Api-Key") == "" {
			// An OAuth client learns from the challenge where to get a token.
			g.mcpOAuth.Challenge(&q.w, nil)
			q.done(http.StatusUnauthorized, "", &llm.Error{Code: "missing_token", Message: "no access token"})
			return nil, false
		}
		if !q.authenticate() {
			return nil, false
		}
		k := q.rc.key
		if k == nil {
			c.ID, c.Anonymous = "anonymous", true
		} else {
			c.ID, c.Key, c.Access = k.ID, k.Name, k.MCP
			if k.stored {
				c.KeyID = k.ID
			}
			if len(k.rules) > 0 && k.rules[0].scope == "" && k.rules[0].tcpm > 0 && g.limiter != nil {
				limit := k.rules[0].tcpm
				c.Admit = func(ctx context.Context) error { return g.admitToolCall(ctx, k, limit) }
			}
		}
	}
	c.Begin = func(ctx context.Context, method, name string) (context.Context, func(*record.ToolCall)) {
		return g.beginToolCall(ctx, q.rc.trace, method, name)
	}
	return c, true
}

// looksLikeJWT tells an access token (three base64url parts) from a gateway key, which has no
// dots, so a key is never sent to the issuer's verifier and a token never to the key store.
func looksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && !strings.HasPrefix(token, "sk-")
}

// admitToolCall counts one forwarded call against the key's tool_calls_per_minute.
func (g *Gateway) admitToolCall(ctx context.Context, k *clientKey, limit int64) error {
	l := g.limiter
	now := g.now()
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	_, ok, err := l.store.Take(ctx, k.ID, counters.At(now), []counters.Amount{limited(mcpScope, counters.Requests, 1, limit-1, true)})
	switch {
	case err != nil:
		g.log.Error(record.MsgCounterStoreError, slog.String("op", "take"), slog.String("key", k.Name), slog.String("scope", mcpScope), slog.String("error", err.Error()))
		if l.closed {
			return fmt.Errorf("the gateway cannot check this key's tool call limit right now (counters.on_store_error: closed); retry shortly")
		}
		return nil
	case !ok:
		return fmt.Errorf("rate limit reached: this key's tool_calls_per_minute is %d; retry in %ds", limit, 60-now.Second())
	}
	return nil
}

// beginToolCall starts the span of one forwarded call, and returns what ends it and writes
// its log line.
func (g *Gateway) beginToolCall(ctx context.Context, trace record.RequestTrace, method, name string) (context.Context, func(*record.ToolCall)) {
	var endSpan func(*record.ToolCall)
	if t, ok := trace.(record.ToolCallTracer); ok {
		ctx, endSpan = t.ToolCall(ctx, method, name)
	}
	return ctx, func(c *record.ToolCall) {
		g.logToolCall(c)
		if endSpan != nil {
			endSpan(c)
		}
	}
}

func (g *Gateway) logToolCall(c *record.ToolCall) {
	attrs := []slog.Attr{
		slog.String("request_id", c.RequestID),
		slog.String("method", c.Method),
		slog.String("server", c.Server),
		slog.String("tool", c.Name),
		slog.String("outcome", c.Outcome),
		slog.Float64("latency_ms", ms(c.Latency)),
		slog.Int("argument_bytes", c.ArgumentBytes),
		slog.Int("result_bytes", c.ResultBytes),
	}
	if c.Key != "" {
		attrs = append(attrs, slog.String("key", c.Key))
	}
	if c.KeyID != "" {
		attrs = append(attrs, slog.String("key_id", c.KeyID))
	}
	if c.Error != "" {
		attrs = append(attrs, slog.String("error_message", c.Error))
	}
	if c.Arguments != nil {
		attrs = append(attrs, slog.String("arguments", string(c.Arguments)))
	}
	if c.Result != nil {
		attrs = append(attrs, slog.String("result", string(c.Result)))
	}
	level := slog.LevelInfo
	if c.Outcome != record.ToolCallOK && c.Outcome != record.ToolCallToolError {
		level = slog.LevelWarn
	}
	g.log.LogAttrs(context.Background(), level, record.MsgToolCall, attrs...)
}

// statusWriter remembers the status the MCP handler answered with, for the request line.
type statusWriter struct {
	*trackingWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.trackingWriter.WriteHeader(code)
}

// Flush lets the handler's event stream reach the client event by event.
func (s *statusWriter) Flush() { _ = flush(s.trackingWriter) }

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.trackingWriter }

// mcpSetup is the gateway's MCP configuration, from the config and options.
func (g *Gateway) mcpSetup(cfg *config.Config, opt *Options) error {
	if len(cfg.MCPServers) > 0 && opt.MCP == nil {
		return fmt.Errorf("gateway: mcp_servers are configured but this build serves no /mcp (the Lambda function needs the mcp build tag: LAMBDA_TAGS=lambda.norpc,mcp)")
	}
	if cfg.MCPOAuth != nil && opt.MCPOAuth == nil && opt.MCP != nil {
		return fmt.Errorf("gateway: mcp_oauth is configured but no verifier was given")
	}
	g.mcp, g.mcpOAuth = opt.MCP, opt.MCPOAuth
	if o := cfg.MCPOAuth; o != nil {
		g.mcpOAuthAccess = o.Access
	}
	g.captureContent = cfg.Telemetry.OTLP != nil && cfg.Telemetry.OTLP.CaptureContent
	return nil
}
