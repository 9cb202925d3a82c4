package gateway

import "github.com/fngate/fngate/core/openai"

// EstimateChatTokens is the input estimate a chat body reserves, for tests of what a request
// is charged when its provider reports no usage.
func EstimateChatTokens(body string) int {
	req, e := openai.DecodeChatRequest([]byte(body), openai.Limits{MaxMessages: 100, MaxTools: 10})
	if e != nil {
		panic(e)
	}
	return estimateTokens(req)
}
