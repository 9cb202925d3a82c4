package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fngate/fngate/core/record"
)

// OpenTelemetry's MCP conventions: the gateway's call to an upstream is an MCP client span
// named "{mcp.method.name} {target}", an execute_tool operation for tools/call.
var (
	keyMCPMethod   = attribute.Key("mcp.method.name")
	keyToolName    = attribute.Key("gen_ai.tool.name")
	keyPromptName  = attribute.Key("gen_ai.prompt.name")
	keyResourceURI = attribute.Key("mcp.resource.uri")
	keyMCPServer   = attribute.Key("fngate.mcp.server")
	keyMCPOutcome  = attribute.Key("fngate.mcp.outcome")
)

// ToolCall begins the CLIENT span of one call /mcp forwards, under the request's span.
func (q *request) ToolCall(ctx context.Context, method, name string) (context.Context, func(*record.ToolCall)) {
	attrs := []attribute.KeyValue{keyMCPMethod.String(method)}
	switch method {
	case "tools/call":
		attrs = append(attrs, keyOperation.String("execute_tool"), keyToolName.String(name))
	case "prompts/get":
		attrs = append(attrs, keyPromptName.String(name))
	case "resources/read":
		attrs = append(attrs, keyResourceURI.String(name))
	}
	ctx, span := q.t.tracer.Start(trace.ContextWithSpan(ctx, q.span), method+" "+name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	start := time.Now()
	return ctx, func(c *record.ToolCall) {
		end := []attribute.KeyValue{keyMCPServer.String(c.Server), keyMCPOutcome.String(c.Outcome)}
		if c.Outcome != record.ToolCallOK {
			end = append(end, keyErrorType.String(c.Outcome))
			span.SetStatus(codes.Error, c.Error)
		}
		span.SetAttributes(end...)
		span.End()
		q.t.m().toolCall.Record(context.Background(), time.Since(start).Seconds(),
			metric.WithAttributes(keyMCPMethod.String(method), keyMCPServer.String(c.Server), keyMCPOutcome.String(c.Outcome)))
	}
}
