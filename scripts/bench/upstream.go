package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The benchmark upstream answers with zero think time from bytes rendered once, so the
// figures measure the hop under test, not the fake. It speaks every wire a front door passes
// through or translates to: OpenAI Chat Completions, legacy Completions and Responses, and
// Anthropic Messages, each as JSON and as SSE; and OpenAI's embeddings (decimals, or base64
// when asked).

const streamChunks = 200

var (
	openaiJSON   []byte
	openaiSSE    []byte
	anthropicSSE []byte
	anthropicJSN []byte
	textJSON     []byte
	textSSE      []byte
	responsesJSN []byte
	responsesSSE []byte
	// embedFloat and embedBase64 answer a batch of embedInputs texts with embedDims-long
	// vectors, as OpenAI writes them: decimals (each float32's float64 digits) or base64.
	embedFloat  []byte
	embedBase64 []byte
)

// The embeddings scenario: a batch of 16 texts, text-embedding-3-small's 1,536 dimensions.
const (
	embedInputs = 16
	embedDims   = 1536
)

func init() {
	words := make([]string, 150)
	for i := range words {
		words[i] = "word" + strconv.Itoa(i)
	}
	text := strings.Join(words, " ")
	openaiJSON = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		text + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":150,"total_tokens":180}}`)

	var b bytes.Buffer
	head := `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":`
	b.WriteString(head + `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range streamChunks {
		fmt.Fprintf(&b, "%s{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, i)
	}
	b.WriteString(head + `{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":200,"total_tokens":230}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	openaiSSE = b.Bytes()

	var a bytes.Buffer
	a.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"bench\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n")
	a.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range streamChunks {
		fmt.Fprintf(&a, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" tok%d\"}}\n\n", i)
	}
	a.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	a.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":200}}\n\n")
	a.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	anthropicSSE = a.Bytes()
	textJSON, textSSE = renderCompletions(text), renderCompletionsSSE()
	responsesJSN, responsesSSE = renderResponses(text), renderResponsesSSE()
	embedFloat, embedBase64 = embeddingsAnswers()
	anthropicJSN = []byte(`{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[{"type":"text","text":"` + text +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":150}}`)
}

// serveUpstream runs the fake until killed. Streams are written chunk by chunk with a flush
// each, as real providers do; with -hold it pauses between chunks to keep streams open, and before a whole answer.
func serveUpstream(addr string, hold time.Duration) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		answer(w, r, openaiJSON, openaiSSE, hold)
	})
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) {
		answer(w, r, textJSON, textSSE, hold)
	})
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
		answer(w, r, responsesJSN, responsesSSE, hold)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		answer(w, r, anthropicJSN, anthropicSSE, hold)
	})
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out := embedFloat
		if bytes.Contains(body, []byte(`"encoding_format":"base64"`)) {
			out = embedBase64
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: mux}).Serve(ln)
}

func writeSSE(w http.ResponseWriter, stream []byte, hold time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	for len(stream) > 0 {
		i := bytes.Index(stream, []byte("\n\n"))
		ev := stream[:i+2]
		stream = stream[i+2:]
		if _, err := w.Write(ev); err != nil {
			return
		}
		_ = rc.Flush()
		if hold > 0 {
			time.Sleep(hold)
		}
	}
}

// answer writes sse for a request that asked to stream, else body as JSON.
func answer(w http.ResponseWriter, r *http.Request, body, sse []byte, hold time.Duration) {
	req, _ := io.ReadAll(r.Body)
	if id, ok := uniqueAnswer(req); ok {
		body = bytes.ReplaceAll(body, []byte("word"), []byte("r"+id+"-word"))
		sse = bytes.ReplaceAll(sse, []byte(" tok"), []byte(" r"+id+"-tok"))
	}
	if bytes.Contains(req, []byte(`"stream":true`)) {
		writeSSE(w, sse, hold)
		return
	}
	if hold > 0 {
		time.Sleep(hold) // a model's think time, before a whole answer
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// uniqueAnswerMarker in a prompt asks for an answer no other request gets: its number goes
// into every word, so that no window of it is one a guardrail's verdict cache has seen.
const uniqueAnswerMarker = "(unique answer "

func uniqueAnswer(req []byte) (string, bool) {
	i := bytes.Index(req, []byte(uniqueAnswerMarker))
	if i < 0 {
		return "", false
	}
	rest := req[i+len(uniqueAnswerMarker):]
	j := bytes.IndexByte(rest, ')')
	if j < 0 {
		return "", false
	}
	return string(rest[:j]), true
}

// renderCompletions is a legacy text_completion answer.
func renderCompletions(text string) []byte {
	return []byte(`{"id":"cmpl-bench","object":"text_completion","created":1700000000,"model":"bench","choices":[{"text":"` + text +
		`","index":0,"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":150,"total_tokens":180}}`)
}

func renderCompletionsSSE() []byte {
	var b bytes.Buffer
	head := `data: {"id":"cmpl-bench","object":"text_completion","created":1700000000,"model":"bench","choices":[{"text":`
	for i := range streamChunks {
		fmt.Fprintf(&b, "%s\" tok%d\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, i)
	}
	b.WriteString(head + `"","index":0,"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"cmpl-bench","object":"text_completion","created":1700000000,"model":"bench","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":200,"total_tokens":230}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// renderResponses is a Responses API answer: one message of output text.
func renderResponses(text string) []byte {
	return []byte(`{"id":"resp_bench","object":"response","created_at":1700000000,"status":"completed","model":"bench","output":[` + responsesMessage(text, "completed") +
		`],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":150,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":180}}`)
}

func responsesMessage(text, status string) string {
	return `{"type":"message","id":"msg_bench","status":"` + status + `","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]}`
}

// renderResponsesSSE is the event stream of the same answer with 200 text deltas.
func renderResponsesSSE() []byte {
	var b bytes.Buffer
	seq := 0
	ev := func(typ, fields string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":\"%s\",\"sequence_number\":%d,%s}\n\n", typ, typ, seq, fields)
		seq++
	}
	inProgress := `{"id":"resp_bench","object":"response","created_at":1700000000,"status":"in_progress","model":"bench","output":[],"usage":null}`
	ev("response.created", `"response":`+inProgress)
	ev("response.in_progress", `"response":`+inProgress)
	ev("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_bench","status":"in_progress","role":"assistant","content":[]}`)
	ev("response.content_part.added", `"item_id":"msg_bench","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`)
	var all strings.Builder
	for i := range streamChunks {
		tok := " tok" + strconv.Itoa(i)
		all.WriteString(tok)
		ev("response.output_text.delta", `"item_id":"msg_bench","output_index":0,"content_index":0,"delta":"`+tok+`","logprobs":[]`)
	}
	ev("response.output_text.done", `"item_id":"msg_bench","output_index":0,"content_index":0,"text":"`+all.String()+`","logprobs":[]`)
	ev("response.content_part.done", `"item_id":"msg_bench","output_index":0,"content_index":0,"part":{"type":"output_text","text":"`+all.String()+`","annotations":[]}`)
	ev("response.output_item.done", `"output_index":0,"item":`+responsesMessage(all.String(), "completed"))
	ev("response.completed", `"response":{"id":"resp_bench","object":"response","created_at":1700000000,"status":"completed","model":"bench","output":[`+
		responsesMessage(all.String(), "completed")+`],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":230}}`)
	return b.Bytes()
}

// embeddingsAnswers renders the embeddings answer in both encodings: vectors of pseudo-random
// unit-scale floats, the same numbers in both.
func embeddingsAnswers() (float, b64 []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	var f, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&f, &b} {
		buf.WriteString(`{"object":"list","data":[`)
	}
	raw := make([]byte, 0, 4*embedDims)
	for i := range embedInputs {
		if i > 0 {
			f.WriteByte(',')
			b.WriteByte(',')
		}
		head := `{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":`
		f.WriteString(head + "[")
		raw = raw[:0]
		for j := range embedDims {
			v := float32(r.NormFloat64() / 40)
			if j > 0 {
				f.WriteByte(',')
			}
			f.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 64))
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
		f.WriteString("]}")
		b.WriteString(head + `"` + base64.StdEncoding.EncodeToString(raw) + `"}`)
	}
	tail := `],"model":"bench","usage":{"prompt_tokens":160,"total_tokens":160}}`
	f.WriteString(tail)
	b.WriteString(tail)
	return f.Bytes(), b.Bytes()
}
