package openaicompat

import (
	"context"
	"encoding/json"
	"io"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// POST /v1/responses/compact on OpenAI itself (the openai kind) is OpenAI's own
// POST {base_url}/responses/compact: the conversation as input items (a continued
// response's first, since the gateway keeps the chain) and the client's other fields as it
// sent them. The response.compaction object comes back verbatim (llm.Answer.Raw) for the door
// to patch its names into; its usage is read for the log and the charge.

// compactBody writes the native compact request body.
func compactBody(req *llm.Request, model string) []byte {
	rs := req.Responses
	b := make([]byte, 0, 64+len(rs.Input))
	b = append(b, `{"model":`...)
	b = openai.AppendString(b, model)
	b = append(b, `,"input":`...)
	if len(rs.Input) > 0 {
		b = append(b, rs.Input...)
	} else {
		b = append(b, "[]"...)
	}
	for _, f := range rs.Fields {
		b = append(b, ',')
		b = openai.AppendString(b, f.Name)
		b = append(b, ':')
		b = append(b, f.Value...)
	}
	return append(b, '}')
}

func (p *Provider) generateCompact(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	resp, err := p.post(ctx, p.compactURL, compactBody(req, t.Model), false)
	if err != nil {
		return nil, err
	}
	defer providers.Drain(resp.Body)
	body, err := io.ReadAll(io.LimitReader(resp.Body, providers.MaxAnswer))
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	var c struct {
		Object string      `json:"object"`
		Usage  *wireUsageR `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil || c.Object != "response.compaction" {
		msg := "the answer is not a response.compaction object"
		if err != nil {
			msg = "unreadable response: " + err.Error()
		}
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: msg}
	}
	a := &llm.Answer{Stop: llm.StopEnd, Raw: body, RawWire: llm.WireResponses}
	if u := c.Usage.llm(); u != nil {
		a.Usage = *u
	}
	return a, nil
}
