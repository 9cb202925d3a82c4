package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The benchmark upstream answers with zero think time from bytes rendered once, so the
// figures measure the hop under test, not the fake. It speaks OpenAI (JSON and SSE) and
// Anthropic Messages (SSE and JSON), the two wires the gateway translates most.

const streamChunks = 200

var (
	openaiJSON   []byte
	openaiSSE    []byte
	anthropicSSE []byte
	anthropicJSN []byte
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
	anthropicJSN = []byte(`{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[{"type":"text","text":"` + text +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":150}}`)
}

// serveUpstream runs the fake until killed. Streams are written chunk by chunk with a flush
// each, as real providers do; with -hold it pauses between chunks to keep streams open.
func serveUpstream(addr string, hold time.Duration) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			writeSSE(w, openaiSSE, hold)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(openaiJSON)))
		_, _ = w.Write(openaiJSON)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			writeSSE(w, anthropicSSE, hold)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(anthropicJSN)))
		_, _ = w.Write(anthropicJSN)
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
