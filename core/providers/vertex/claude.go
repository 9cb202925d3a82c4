package vertex

import (
	"bytes"
	"context"
	"io"
	"strconv"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/genproto/googleapis/api/httpbody"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// vertexAnthropicVersion is the API version Claude on Vertex AI requires in the body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// checkClaude refuses what Claude on Vertex AI cannot serve: what the anthropic package
// refuses for any Anthropic-wire route, and references to Anthropic's Files API (a file
// source, a container_upload block), which only Anthropic's own API can resolve.
func checkClaude(req *llm.Request, model string) *llm.Error {
	if oe := anthropic.Check(req, claudeModel(model)); oe != nil {
		return oe
	}
	for i := range req.System {
		if oe := checkFileRefs(&req.System[i], "system["+strconv.Itoa(i)+"]"); oe != nil {
			return oe
		}
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Parts {
			if oe := checkFileRefs(&m.Parts[j], "messages["+strconv.Itoa(i)+"].content["+strconv.Itoa(j)+"]"); oe != nil {
				return oe
			}
		}
	}
	return nil
}

func checkFileRefs(p *llm.Part, path string) *llm.Error {
	for j := range p.Content {
		if oe := checkFileRefs(&p.Content[j], path+".content["+strconv.Itoa(j)+"]"); oe != nil {
			return oe
		}
	}
	if p.Raw == nil || !filesAPIRef(p.Raw) {
		return nil
	}
	return llm.Unsupported(path, path+": Anthropic Files API references are not available on Vertex AI: send the file's content instead")
}

// filesAPIRef reports a block that names a Files API upload: a container_upload block, or
// a block whose source is {"type": "file", "file_id": ...}. The Messages door keeps an
// image's file source itself as the part's Raw, hence the bare source too.
func filesAPIRef(block []byte) bool {
	found := false
	_ = jsonx.Members(block, func(key string, v []byte) error {
		switch key {
		case "type":
			t := string(bytes.TrimSpace(v))
			found = found || t == `"container_upload"` || t == `"file"`
		case "source":
			if jsonx.KindOf(v) == jsonx.Object {
				_ = jsonx.Members(v, func(key string, v []byte) error {
					found = found || key == "type" && string(bytes.TrimSpace(v)) == `"file"`
					return nil
				})
			}
		}
		return nil
	})
	return found
}

// claudeOptions is the anthropic package's Messages body as Vertex AI wants it:
//   - no "model" (the resource name carries it) and anthropic_version in the body;
//   - the client's anthropic-beta flags as "anthropic_beta" in the body. The call is a gRPC
//     RawPredict whose only payload is this HttpBody: no HTTP header reaches the model, and
//     LiteLLM's Vertex AI transformation (vertex_ai_partner_models/anthropic) sends the
//     flags as the body's anthropic_beta list for the same reason;
//   - system messages inside the conversation hoisted into "system" (the Messages door's
//     LateSystem rule; the chat door's Check refused them already): Vertex AI fixes the API
//     version at vertex-2023-10-16, whose rules predate a system role in messages, and the
//     client's anthropic-version header cannot be forwarded over it.
func claudeOptions(stream bool, model string) anthropic.RequestOptions {
	return anthropic.RequestOptions{Stream: stream, OmitModel: true, AnthropicVersion: vertexAnthropicVersion, BetasInBody: true,
		Model: claudeModel(model)}
}

// claudeModel is what a Claude model takes on Vertex AI: the model's own rules, but a JSON
// response_format always through the answer tool, since Vertex AI does not document
// Anthropic's structured outputs (output_config.format) for its Claude models.
func claudeModel(model string) anthropic.Model {
	m := anthropic.ModelOf(model)
	m.Structured = anthropic.ByTool
	return m
}

func claudeBody(req *llm.Request, t providers.Target, stream bool) *httpbody.HttpBody {
	return &httpbody.HttpBody{ContentType: "application/json", Data: anthropic.BuildRequest(req, t, claudeOptions(stream, t.Model))}
}

// claudeGenerate makes one RawPredict call; the answer is a Messages response, kept whole
// for a Messages door client (llm.Answer.Raw).
func (p *Provider) claudeGenerate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	resp, err := client.RawPredict(ctx, &aiplatformpb.RawPredictRequest{Endpoint: p.claudeEndpoint(t.Model), HttpBody: claudeBody(req, t, false)})
	if err != nil {
		return nil, callError(ctx, err, Claude, false)
	}
	a, err := anthropic.ParseResponseFor(resp.GetData(), req, claudeModel(t.Model))
	if err != nil {
		return nil, providers.AsError(ctx, err, Name)
	}
	return a, nil
}

// claudeStream starts a StreamRawPredict call and receives its first chunk before
// returning, for the same reason as geminiStream. The chunks carry Anthropic's event stream
// cut anywhere (inside a line, a JSON text, a UTF-8 character): they are read as one byte
// stream by the anthropic package's translator, which passes the events through verbatim
// to a Messages door client.
func (p *Provider) claudeStream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	rs, err := client.StreamRawPredict(sctx, &aiplatformpb.StreamRawPredictRequest{Endpoint: p.claudeEndpoint(t.Model), HttpBody: claudeBody(req, t, true)})
	if err != nil {
		cancel()
		return nil, callError(ctx, err, Claude, false)
	}
	first, err := rs.Recv()
	if err != nil && err != io.EOF {
		cancel()
		return nil, callError(ctx, err, Claude, false)
	}
	r := &chunkReader{ctx: ctx, recv: rs.Recv, cancel: cancel}
	if err == io.EOF {
		r.err = io.EOF
	} else {
		r.buf = first.GetData()
	}
	return anthropic.NewStreamFor(ctx, r, Name, req, claudeModel(t.Model)), nil
}

// claudeCount asks the count-tokens endpoint: the Messages count body (no output maximum,
// sampling or stream) with the model named in it, anthropic_version and the betas as for a
// call. The answer is {"input_tokens": N}.
func (p *Provider) claudeCount(ctx context.Context, req *llm.Request, t providers.Target) (int, error) {
	endpoint, id, ok := p.countEndpoint(t.Model)
	if !ok {
		return 0, &providers.Error{Class: providers.Unsupported, Provider: Name,
			Message: "the route's model " + quoteString(t.Model) + " has no count-tokens endpoint"}
	}
	opt := claudeOptions(false, t.Model)
	opt.OmitModel, opt.Count = false, true
	body := anthropic.BuildRequest(req, providers.Target{Model: id, API: t.API, MaxOutputTokens: t.MaxOutputTokens}, opt)
	client, err := p.predictionClient()
	if err != nil {
		return 0, err
	}
	resp, err := client.RawPredict(ctx, &aiplatformpb.RawPredictRequest{Endpoint: endpoint,
		HttpBody: &httpbody.HttpBody{ContentType: "application/json", Data: body}})
	if err != nil {
		return 0, callError(ctx, err, Claude, false)
	}
	n, err := anthropic.ParseCount(bytes.NewReader(resp.GetData()))
	if err != nil {
		return 0, providers.AsError(ctx, err, Name)
	}
	return n, nil
}

// chunkReader reads the HttpBody chunks of a stream as one byte stream. A failure status
// becomes a classified *providers.Error, which the Anthropic translator reports as is; a
// clean end is io.EOF, after which the translator decides whether the events ended properly.
type chunkReader struct {
	ctx    context.Context
	recv   func() (*httpbody.HttpBody, error)
	cancel func()
	buf    []byte
	err    error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		hb, err := r.recv()
		switch {
		case err == io.EOF:
			r.err = io.EOF
		case err != nil:
			// The first chunk arrived before the stream was handed out: the request was
			// accepted.
			r.err = callError(r.ctx, err, Claude, true)
		default:
			r.buf = hb.GetData()
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Close ends the call.
func (r *chunkReader) Close() error {
	r.cancel()
	return nil
}
