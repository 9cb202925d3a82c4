package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/openai"
)

// EstimateChatTokens is the input estimate a chat body reserves, for tests of what a request
// is charged when its provider reports no usage.
func EstimateChatTokens(body string) int {
	req, e := openai.DecodeChatRequest([]byte(body), llm.Limits{MaxMessages: 100, MaxTools: 10})
	if e != nil {
		panic(e)
	}
	return estimateTokens(req)
}

// EstimateMessagesTokens is the input estimate of a Messages body: what its message_start
// says on a route whose backend has not reported the prompt by its first content.
func EstimateMessagesTokens(body string) int {
	req, e := messages.Decode([]byte(body), http.Header{"Anthropic-Version": {"2023-06-01"}}, llm.Limits{MaxMessages: 100, MaxTools: 10})
	if e != nil {
		panic(e)
	}
	return estimateTokens(req)
}
