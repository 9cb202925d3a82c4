package vertex

import (
	"context"
	"io"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/genproto/googleapis/api/httpbody"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// vertexAnthropicVersion is the API version Claude on Vertex AI requires in the body.
const vertexAnthropicVersion = "vertex-2023-10-16"

// claudeBody is the anthropic package's Messages body as Vertex AI wants it: the model is
// in the resource name, not the body, and the version travels in the body.
func claudeBody(req *openai.ChatRequest, t providers.Target, stream bool) (*httpbody.HttpBody, error) {
	body, oe := anthropic.BuildRequest(req, t, anthropic.RequestOptions{Stream: stream, OmitModel: true, AnthropicVersion: vertexAnthropicVersion})
	if oe != nil {
		return nil, refused(oe)
	}
	return &httpbody.HttpBody{ContentType: "application/json", Data: body}, nil
}

// claudeChat makes one RawPredict call; the answer is a Messages response.
func (p *Provider) claudeChat(ctx context.Context, req *openai.ChatRequest, t providers.Target) (*openai.Completion, error) {
	body, err := claudeBody(req, t, false)
	if err != nil {
		return nil, err
	}
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	resp, err := client.RawPredict(ctx, &aiplatformpb.RawPredictRequest{Endpoint: p.claudeEndpoint(t.Model), HttpBody: body})
	if err != nil {
		return nil, callError(ctx, err, Claude, false)
	}
	c, err := anthropic.ParseResponse(resp.GetData())
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: Name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	return c, nil
}

// claudeStream starts a StreamRawPredict call and receives its first chunk before
// returning, for the same reason as geminiStream. The chunks carry Anthropic's event stream
// cut anywhere (inside a line, a JSON text, a UTF-8 character): they are read as one byte
// stream by the anthropic package's translator.
func (p *Provider) claudeStream(ctx context.Context, req *openai.ChatRequest, t providers.Target) (providers.Stream, error) {
	body, err := claudeBody(req, t, true)
	if err != nil {
		return nil, err
	}
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	rs, err := client.StreamRawPredict(sctx, &aiplatformpb.StreamRawPredictRequest{Endpoint: p.claudeEndpoint(t.Model), HttpBody: body})
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
	return anthropic.NewStream(ctx, r, Name), nil
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
