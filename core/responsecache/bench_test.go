package responsecache

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// BenchmarkIdentity is the digest a cached request pays before its look-up: a one-message
// chat, and an agent's history of 100 turns (140 KB).
func BenchmarkIdentity(b *testing.B) {
	small := &llm.Request{Model: "m", System: []llm.Part{{Kind: llm.PartText, Text: "You are terse."}},
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "Summarise the plot of a long novel in one hundred and fifty words, please."}}}}}
	history := &llm.Request{Model: "m"}
	for range 100 {
		history.Messages = append(history.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: strings.Repeat("agent history ", 100)}}})
	}
	for _, c := range []struct {
		name string
		req  *llm.Request
	}{{"one message", small}, {"100 turns, 140 KB", history}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := NewIdentity(Partition{Scope: "key:a", Model: "m", Door: "chat"}, c.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHitDecode is what a hit reads: a 200-delta stream's recording, decoded and, for a
// request made whole, put together.
func BenchmarkHitDecode(b *testing.B) {
	r := &Recording{}
	for i := range 200 {
		r.Deltas = append(r.Deltas, llm.Delta{Text: " tok" + strconv.Itoa(i)})
	}
	r.Deltas = append(r.Deltas, llm.Delta{Stop: llm.StopEnd, Usage: &llm.Usage{InputTokens: llm.Int(30), OutputTokens: llm.Int(200)}})
	body, err := r.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rec, err := Decode(body)
		if err != nil {
			b.Fatal(err)
		}
		_ = rec.Answer()
	}
}
