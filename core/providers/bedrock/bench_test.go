package bedrock

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/providers"
)

// toolTurnsWithImages is a Messages request as an agent sends it: a screenshot in the first
// turn, four tool calls with arguments, and a second screenshot in a tool result.
func toolTurnsWithImages(tb testing.TB) *llm.Request {
	img := make([]byte, 256<<10)
	for i := range img {
		img[i] = byte(i * 7)
	}
	data := base64.StdEncoding.EncodeToString(img)
	var b strings.Builder
	b.WriteString(`{"model":"gw","max_tokens":1024,"tools":[{"name":"read_file","description":"Reads a file","input_schema":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}}],"messages":[`)
	b.WriteString(`{"role":"user","content":[{"type":"text","text":"What does this screen show? Read the files it names."},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}]}`)
	b.WriteString(`,{"role":"assistant","content":[{"type":"text","text":"Reading them."}`)
	for i := range 4 {
		b.WriteString(`,{"type":"tool_use","id":"toolu_` + strconv.Itoa(i) + `","name":"read_file","input":{"path":"/src/file` + strconv.Itoa(i) + `.go","limit":2000,"options":{"follow":true,"encoding":"utf-8","ranges":[1,2,3,4,5]}}}`)
	}
	b.WriteString(`]},{"role":"user","content":[`)
	for i := range 3 {
		b.WriteString(`{"type":"tool_result","tool_use_id":"toolu_` + strconv.Itoa(i) + `","content":"package main\n\nfunc main() {}\n"},`)
	}
	b.WriteString(`{"type":"tool_result","tool_use_id":"toolu_3","content":[{"type":"text","text":"the rendered page"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"` + data + `"}}]}`)
	b.WriteString(`]}]}`)
	req, oe := messages.Decode([]byte(b.String()), http.Header{"Anthropic-Version": {"2023-06-01"}}, llm.Limits{})
	if oe != nil {
		tb.Fatal(oe)
	}
	return req
}

// BenchmarkConverseRequest is the work of one Converse attempt before the call: the route's
// Check, then the translation.
func BenchmarkConverseRequest(b *testing.B) {
	req := toolTurnsWithImages(b)
	p := &Provider{}
	t := providers.Target{Model: "amazon.nova-pro-v1:0"}
	b.ReportAllocs()
	for b.Loop() {
		if oe := p.Check(req, t); oe != nil {
			b.Fatal(oe)
		}
		c, err := buildConverse(req, t)
		if err != nil || len(c.Messages) != 3 {
			b.Fatal(err, len(c.Messages))
		}
	}
}

// BenchmarkConverseCheck is the work of a Converse route the planner asks but never
// attempts, such as a fallback: its Check alone.
func BenchmarkConverseCheck(b *testing.B) {
	req := toolTurnsWithImages(b)
	p := &Provider{}
	t := providers.Target{Model: "amazon.nova-pro-v1:0"}
	b.ReportAllocs()
	for b.Loop() {
		if oe := p.Check(req, t); oe != nil {
			b.Fatal(oe)
		}
	}
}
