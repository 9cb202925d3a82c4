package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// call is one client request as the attempt loop sees it: chat and legacy completions differ
// only in how a route is checked and called.
type call interface {
	check(rt *route) *openai.Error
	once(ctx context.Context, rt *route) (*openai.Completion, error)
	open(ctx context.Context, rt *route) (providers.Stream, error)
	streaming() bool
	includeUsage() bool
	// encoders for the two answer shapes
	appendCompletion(b []byte, id string, created int64, model string, c *openai.Completion) []byte
	chunkEncoder(id string, created int64, model string) *openai.ChunkEncoder
	idPrefix() string
}

type chatCall struct{ req *openai.ChatRequest }

func (c chatCall) check(rt *route) *openai.Error { return rt.provider.CheckChat(c.req, rt.target) }
func (c chatCall) once(ctx context.Context, rt *route) (*openai.Completion, error) {
	return rt.provider.Chat(ctx, c.req, rt.target)
}
func (c chatCall) open(ctx context.Context, rt *route) (providers.Stream, error) {
	return rt.provider.ChatStream(ctx, c.req, rt.target)
}
func (c chatCall) streaming() bool    { return c.req.Stream }
func (c chatCall) includeUsage() bool { return c.req.IncludeUsage() }
func (c chatCall) appendCompletion(b []byte, id string, created int64, model string, comp *openai.Completion) []byte {
	return openai.AppendChatCompletion(b, id, created, model, comp)
}
func (c chatCall) chunkEncoder(id string, created int64, model string) *openai.ChunkEncoder {
	return openai.NewChatChunkEncoder(id, created, model, c.req.IncludeUsage())
}
func (c chatCall) idPrefix() string { return "chatcmpl-" }

type completionCall struct{ req *openai.CompletionRequest }

func (c completionCall) check(rt *route) *openai.Error {
	cp, ok := rt.provider.(providers.CompletionProvider)
	if !ok {
		return openai.UnsupportedEndpoint(c.req.Model, rt.provider.Name())
	}
	return cp.CheckCompletion(c.req, rt.target)
}
func (c completionCall) once(ctx context.Context, rt *route) (*openai.Completion, error) {
	return rt.provider.(providers.CompletionProvider).Complete(ctx, c.req, rt.target)
}
func (c completionCall) open(ctx context.Context, rt *route) (providers.Stream, error) {
	return rt.provider.(providers.CompletionProvider).CompleteStream(ctx, c.req, rt.target)
}
func (c completionCall) streaming() bool    { return c.req.Stream }
func (c completionCall) includeUsage() bool { return c.req.IncludeUsage() }
func (c completionCall) appendCompletion(b []byte, id string, created int64, model string, comp *openai.Completion) []byte {
	return openai.AppendTextCompletion(b, id, created, model, comp)
}
func (c completionCall) chunkEncoder(id string, created int64, model string) *openai.ChunkEncoder {
	return openai.NewTextChunkEncoder(id, created, model, c.req.IncludeUsage())
}
func (c completionCall) idPrefix() string { return "cmpl-" }

func (g *Gateway) serveChat(w *trackingWriter, r *http.Request, rc *requestCtx) {
	rc.endpoint = "chat"
	body, release, ok := g.receive(w, r, rc)
	if !ok {
		return
	}
	defer release()
	req, oe := openai.DecodeChat(body, g.limits)
	if oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	rc.model, rc.stream = req.Model, req.Stream
	rc.labels = labels(req.User, req.Metadata, rc)
	m, oe := g.lookup(req.Model, rc)
	if oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	if oe := m.checkOutputMax("max_completion_tokens", req.MaxCompletionTokens); oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	g.run(w, r, rc, m, chatCall{req})
}

func (g *Gateway) serveCompletion(w *trackingWriter, r *http.Request, rc *requestCtx) {
	rc.endpoint = "completions"
	body, release, ok := g.receive(w, r, rc)
	if !ok {
		return
	}
	defer release()
	req, oe := openai.DecodeCompletion(body)
	if oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	rc.model, rc.stream = req.Model, req.Stream
	rc.labels = labels(req.User, nil, rc)
	m, oe := g.lookup(req.Model, rc)
	if oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	if oe := m.checkOutputMax("max_tokens", req.MaxTokens); oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	g.run(w, r, rc, m, completionCall{req})
}

// lookup finds the model the key asked for. A model the key may not use gets the very answer
// of one that does not exist (OpenAI's own wording covers both), so a key cannot learn which
// models the gateway serves to others.
func (g *Gateway) lookup(name string, rc *requestCtx) (*model, *openai.Error) {
	m, ok := g.models[name]
	if !ok || !allowsModel(rc.key, name) {
		return nil, &openai.Error{Status: http.StatusNotFound, Type: openai.TypeNotFound, Param: "model", Code: "model_not_found",
			Message: "The model `" + name + "` does not exist or you do not have access to it. GET /v1/models lists the models you can use."}
	}
	return m, nil
}

// checkOutputMax applies the model's token rules: a priced model needs an explicit output
// maximum (so no request can run up an unbounded bill), and none may exceed the ceiling.
func (m *model) checkOutputMax(param string, v *int) *openai.Error {
	if v == nil {
		if m.cfg.Priced() {
			return openai.BadRequest(param, param+" is required for the priced model "+m.cfg.Name)
		}
		return nil
	}
	if m.cfg.MaxOutputTokens > 0 && *v > m.cfg.MaxOutputTokens {
		return openai.BadRequest(param, param+" is "+strconv.Itoa(*v)+", above the limit of "+strconv.Itoa(m.cfg.MaxOutputTokens)+" for "+m.cfg.Name)
	}
	return nil
}

// labels are log-only: user and metadata never reach a provider.
func labels(user string, md map[string]string, rc *requestCtx) []slog.Attr {
	var out []slog.Attr
	if rc.key != nil {
		out = append(out, slog.String("key", rc.key.Name))
	}
	if user != "" {
		out = append(out, slog.String("user", user))
	}
	for k, v := range md {
		out = append(out, slog.String("metadata."+k, v))
	}
	return out
}
