package openai

import (
	"reflect"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// A typical agent request: a system prompt, a few turns, a tool round trip and two tools.
const benchChat = `{"model":"gw/model","max_completion_tokens":512,"temperature":0.2,"stream":true,"stream_options":{"include_usage":true},
"messages":[{"role":"system","content":"You are a careful assistant that answers briefly and cites the tools it used."},
{"role":"user","content":"What is the weather in Paris, and should I take an umbrella this afternoon?"},
{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
{"role":"tool","tool_call_id":"call_1","content":"{\"temp_c\":14,\"rain_probability\":0.7}"},
{"role":"assistant","content":"It is 14°C with a 70% chance of rain."},
{"role":"user","content":"Thanks. And tomorrow morning?"}],
"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
{"type":"function","function":{"name":"get_forecast","description":"Forecast for a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"when":{"type":"string"}},"required":["city","when"]}}}],
"user":"u-42","metadata":{"team":"travel"}}`

func BenchmarkDecodeChat(b *testing.B) {
	body := []byte(benchChat)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeChat(body, llm.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckKeys is the share of BenchmarkDecodeChat spent refusing case-folded and
// repeated keys.
func BenchmarkCheckKeys(b *testing.B) {
	body := []byte(benchChat)
	t := reflect.TypeFor[ChatRequest]()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if e := checkKeys(body, t, ""); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkChunkEncode is the per-token cost of the SSE encoding.
func BenchmarkChunkEncode(b *testing.B) {
	e := NewChatChunkEncoder("chatcmpl-0123456789abcdefghijklmn", 1700000000, "gw/model", true)
	d := llm.Delta{Text: " token"}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = e.AppendDelta(buf[:0], &d, false)
	}
}
