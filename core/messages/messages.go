// Package messages is the Anthropic Messages front door's wire: strict decoding of
// POST /v1/messages and /v1/messages/count_tokens into the gateway's request, and the
// encoding of answers, stream events and errors in Anthropic's shapes.
//
//	decode.go   request body and headers -> llm.Request, refusing what Anthropic refuses
//	encode.go   llm.Answer -> message object; usage; llm.Error -> Anthropic's status and error
//	stream.go   llm.Delta -> message_start ... message_stop events, or the upstream's own
//	            events passed through from an Anthropic-wire backend
//
// "Strict" here means the Anthropic wire as it is today: a field Anthropic accepts is
// accepted, and either honoured by the route or refused by it with the reason (what only
// Anthropic-wire backends can carry is kept verbatim in llm.Request.Anthropic and in parts'
// Raw); a field Anthropic would reject is rejected here, with the path of the field in
// Anthropic's own notation (messages.0.content.1.text).
package messages
