package openaicompat

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

func appendCompletionBody(b []byte, req *llm.Request, model string, stream bool) []byte {
	b = append(b, `{"model":`...)
	b = openai.AppendString(b, model)
	b = append(b, `,"prompt":`...)
	b = openai.AppendString(b, req.Prompt)
	if req.MaxTokens != nil {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(*req.MaxTokens), 10)
	}
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = strconv.AppendFloat(b, *req.Temperature, 'g', -1, 64)
	}
	if req.TopP != nil {
		b = append(b, `,"top_p":`...)
		b = strconv.AppendFloat(b, *req.TopP, 'g', -1, 64)
	}
	b = appendStop(b, req.Stop)
	b = appendExtended(b, req)
	if stream {
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}')
}
