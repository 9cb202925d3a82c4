package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/record"
)

// The methods the gateway answers itself, from its upstreams; the SDK answers the protocol's
// own (initialize, ping, logging/setLevel) and refuses the rest.
const (
	methodListTools     = "tools/list"
	methodCallTool      = "tools/call"
	methodListPrompts   = "prompts/list"
	methodGetPrompt     = "prompts/get"
	methodListResources = "resources/list"
	methodListTemplates = "resources/templates/list"
	methodReadResource  = "resources/read"
)

// maxCaptured bounds the arguments and result a log line holds under content capture.
const maxCaptured = 16 << 10

// perCaller is the cache fields of every list: a list answered here skips the SDK's own list
// handler, which would fill in the protocol's default, and from 2026-07-28 on the field is
// required (Claude Code 2.1.332 drops a list whose cacheScope is empty, the gateway's tools
// with it). What a caller may use shapes its list, so no one else may be served it.
var perCaller = mcpsdk.Cacheable{CacheScope: "private"}

// dispatch is the server's receiving middleware: lists are aggregated from the catalogs and
// calls forwarded, per the caller the request's context carries.
func (h *Handler) dispatch(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		caller := mcpcall.FromContext(ctx)
		if caller == nil {
			return next(ctx, method, req)
		}
		switch method {
		case methodListTools:
			res := &mcpsdk.ListToolsResult{Cacheable: perCaller, Tools: []*mcpsdk.Tool{}}
			for _, cat := range h.catalogs(ctx, caller) {
				for _, t := range catTools(cat) {
					if caller.Allows(serverOf(t.Name), t.Name) {
						res.Tools = append(res.Tools, t)
					}
				}
			}
			return res, nil
		case methodListPrompts:
			res := &mcpsdk.ListPromptsResult{Cacheable: perCaller, Prompts: []*mcpsdk.Prompt{}}
			for _, cat := range h.catalogs(ctx, caller) {
				if cat != nil {
					res.Prompts = append(res.Prompts, cat.prompts...)
				}
			}
			return res, nil
		case methodListResources:
			res := &mcpsdk.ListResourcesResult{Cacheable: perCaller, Resources: []*mcpsdk.Resource{}}
			for _, cat := range h.catalogs(ctx, caller) {
				if cat != nil {
					res.Resources = append(res.Resources, cat.resources...)
				}
			}
			return res, nil
		case methodListTemplates:
			res := &mcpsdk.ListResourceTemplatesResult{Cacheable: perCaller, ResourceTemplates: []*mcpsdk.ResourceTemplate{}}
			for _, cat := range h.catalogs(ctx, caller) {
				if cat != nil {
					res.ResourceTemplates = append(res.ResourceTemplates, cat.templates...)
				}
			}
			return res, nil
		case methodCallTool:
			r := req.(*mcpsdk.CallToolRequest)
			return h.forward(ctx, caller, r.Session, method, r.Params.Name, r.Params.Arguments, r.Params.GetProgressToken())
		case methodGetPrompt:
			r := req.(*mcpsdk.GetPromptRequest)
			args, _ := json.Marshal(r.Params.Arguments)
			return h.forward(ctx, caller, r.Session, method, r.Params.Name, args, r.Params.GetProgressToken())
		case methodReadResource:
			r := req.(*mcpsdk.ReadResourceRequest)
			return h.forward(ctx, caller, r.Session, method, r.Params.URI, nil, r.Params.GetProgressToken())
		}
		return next(ctx, method, req)
	}
}

func catTools(c *catalog) []*mcpsdk.Tool {
	if c == nil {
		return nil
	}
	return c.tools
}

// serverOf is the server part of a namespaced name.
func serverOf(name string) string {
	s, _, _ := strings.Cut(name, config.MCPNamespaceSeparator)
	return s
}

// forward sends one call to the upstream that owns name, when the caller may make it, and
// records it. What the client is told of a refusal or a failure is a JSON-RPC error naming
// the tool; a tool that ran and failed is the upstream's own isError result.
func (h *Handler) forward(ctx context.Context, caller *mcpcall.Caller, session *mcpsdk.ServerSession, method, name string, args json.RawMessage, token any) (mcpsdk.Result, error) {
	rec := &record.ToolCall{RequestID: caller.RequestID, Key: caller.Key, KeyID: caller.KeyID, Method: method, Name: name, ArgumentBytes: len(args)}
	end := func(*record.ToolCall) {}
	if caller.Begin != nil {
		ctx, end = caller.Begin(ctx, method, name)
	}
	start := time.Now()
	res, err := h.forwardOnce(ctx, caller, session, rec, method, name, args, token)
	rec.Latency = time.Since(start)
	res, err = h.redact(res, err)
	if err != nil {
		rec.Error = err.Error()
	} else if b, merr := json.Marshal(res); merr == nil {
		rec.ResultBytes = len(b)
		if caller.CaptureContent {
			rec.Result = capped(b)
		}
	}
	if caller.CaptureContent && len(args) > 0 {
		rec.Arguments = capped(args)
	}
	end(rec)
	return res, err
}

// redact blanks the config's secrets in what the client is about to get: an error's message
// and a result's texts.
func (h *Handler) redact(res mcpsdk.Result, err error) (mcpsdk.Result, error) {
	sec := h.opt.Secrets
	if sec == nil {
		return res, err
	}
	if w, ok := err.(*sdk.Error); ok {
		w.Message = sec.Redact(w.Message)
	}
	var contents []mcpsdk.Content
	switch r := res.(type) {
	case *mcpsdk.CallToolResult:
		contents = r.Content
	case *mcpsdk.GetPromptResult:
		for _, m := range r.Messages {
			contents = append(contents, m.Content)
		}
	case *mcpsdk.ReadResourceResult:
		for _, c := range r.Contents {
			c.Text = sec.Redact(c.Text)
		}
	}
	for _, c := range contents {
		if t, ok := c.(*mcpsdk.TextContent); ok {
			t.Text = sec.Redact(t.Text)
		}
	}
	return res, err
}

func capped(b []byte) []byte {
	if len(b) > maxCaptured {
		return append(b[:maxCaptured:maxCaptured], "..."...)
	}
	return b
}

func (h *Handler) forwardOnce(ctx context.Context, caller *mcpcall.Caller, session *mcpsdk.ServerSession, rec *record.ToolCall, method, name string, args json.RawMessage, token any) (mcpsdk.Result, error) {
	u, own, err := h.owner(ctx, caller, method, name)
	if u != nil {
		rec.Server = u.name
	}
	if err != nil {
		rec.Outcome = record.ToolCallRefused
		return nil, err
	}
	rec.Name = own
	if caller.Admit != nil {
		if err := caller.Admit(ctx); err != nil {
			rec.Outcome = record.ToolCallLimited
			return nil, &sdk.Error{Code: codeLimited, Message: fmt.Sprintf("%s %s: %v", what(method), name, err)}
		}
	}

	rel := &relay{ctx: ctx, session: session, token: token}
	upCtx, stop := upstreamContext(ctx)
	defer stop()
	callCtx, cancel := context.WithTimeout(withRelay(upCtx, rel), u.timeout())
	defer cancel()
	res, err := u.call(callCtx, method, own, args, token)
	switch {
	case err == nil:
		if r, ok := res.(*mcpsdk.CallToolResult); ok && r.IsError {
			rec.Outcome = record.ToolCallToolError
		} else {
			rec.Outcome = record.ToolCallOK
		}
		return res, nil
	case ctx.Err() != nil:
		rec.Outcome = record.ToolCallClosed
		return nil, ctx.Err()
	case rel.tooLarge.Load():
		rec.Outcome = record.ToolCallTooLarge
		return nil, &sdk.Error{Code: sdk.CodeInternalError, Message: fmt.Sprintf("%s %s: the answer of server %s passed the gateway's bound of %d bytes", what(method), name, u.name, h.opt.MaxResultBytes)}
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		rec.Outcome = record.ToolCallTimeout
		return nil, &sdk.Error{Code: sdk.CodeInternalError, Message: fmt.Sprintf("%s %s: server %s did not answer within %v", what(method), name, u.name, u.timeout())}
	}
	rec.Outcome = record.ToolCallUpstream
	var werr *sdk.Error
	if errors.As(err, &werr) {
		// The upstream's own JSON-RPC error (an unknown tool, bad arguments): the client
		// gets it as sent, its message prefixed with whose it is.
		return nil, &sdk.Error{Code: werr.Code, Message: fmt.Sprintf("%s %s: server %s: %s", what(method), name, u.name, werr.Message), Data: werr.Data}
	}
	return nil, &sdk.Error{Code: sdk.CodeInternalError, Message: fmt.Sprintf("%s %s: server %s failed: %v", what(method), name, u.name, err)}
}

// codeLimited is a call refused by the caller's tool_calls_per_minute: JSON-RPC's range for
// implementation-defined server errors.
const codeLimited = -32029

func what(method string) string {
	switch method {
	case methodGetPrompt:
		return "prompt"
	case methodReadResource:
		return "resource"
	}
	return "tool"
}

// owner returns the upstream that owns name and its own name for it, or the refusal the
// client is sent.
func (h *Handler) owner(ctx context.Context, caller *mcpcall.Caller, method, name string) (*upstream, string, error) {
	refuse := func(why string) error {
		return &sdk.Error{Code: sdk.CodeInvalidParams, Message: fmt.Sprintf("%s %s: %s", what(method), name, why)}
	}
	if method == methodReadResource {
		for _, cat := range h.catalogs(ctx, caller) {
			if cat != nil && cat.owned[name] != "" {
				for _, r := range cat.resources {
					if r.URI == name {
						return h.upstreams[serverOf(r.Name)], name, nil
					}
				}
			}
		}
		return nil, "", refuse("no server this key may use lists it")
	}
	server, own, ok := strings.Cut(name, config.MCPNamespaceSeparator)
	u := h.upstreams[server]
	if !ok || u == nil || own == "" {
		return nil, "", refuse("unknown: names are <server>__<name>, and no server of that name is configured")
	}
	if !caller.Allows(server, "") || method == methodCallTool && !caller.Allows(server, name) {
		return u, "", refuse("not allowed for this key (see its mcp access)")
	}
	if method == methodCallTool && !offered(&u.cfg.Tools, own) {
		return u, "", refuse(fmt.Sprintf("server %s does not offer it through the gateway (mcp_servers.%s.tools)", server, server))
	}
	// A call need not wait for a list: the name says where it goes, so a tool the instance
	// has not listed yet (or could not, its server having been down) is still called.
	return u, own, nil
}

// call sends one call on u's session, dialing again once when the session it had is gone
// (the server restarted and forgot it) before anything was answered.
func (u *upstream) call(ctx context.Context, method, name string, args json.RawMessage, token any) (mcpsdk.Result, error) {
	var meta mcpsdk.Meta
	if token != nil {
		meta = mcpsdk.Meta{"progressToken": token}
	}
	for try := 0; ; try++ {
		s, err := u.client(ctx)
		if err != nil {
			return nil, err
		}
		var res mcpsdk.Result
		switch method {
		case methodCallTool:
			res, err = s.CallTool(ctx, &mcpsdk.CallToolParams{Meta: meta, Name: name, Arguments: args})
		case methodGetPrompt:
			var a map[string]string
			if len(args) > 0 && string(args) != "null" {
				_ = json.Unmarshal(args, &a)
			}
			res, err = s.GetPrompt(ctx, &mcpsdk.GetPromptParams{Meta: meta, Name: name, Arguments: a})
		case methodReadResource:
			res, err = s.ReadResource(ctx, &mcpsdk.ReadResourceParams{Meta: meta, URI: name})
		}
		if err == nil || try > 0 || !sessionGone(err) {
			if err != nil && !isWireError(err) {
				u.drop(s)
			}
			return res, err
		}
		u.drop(s)
	}
}

func isWireError(err error) bool {
	var w *sdk.Error
	return errors.As(err, &w)
}

// sessionGone reports the upstream's refusal of a session it no longer has, which a new
// session cures.
func sessionGone(err error) bool {
	return errors.Is(err, mcpsdk.ErrConnectionClosed) || errors.Is(err, mcpsdk.ErrSessionMissing)
}
