package local

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
)

// cleanChunk is what agent histories are made of: prose, code, JSON, logs and markdown, with
// the numbers, dates, versions, decorators and identifiers that look a little like entities
// and are not.
const cleanChunk = `## Release notes for v2.10.4 (2026-12-02)

The gateway now retries on 429 and 503 with a backoff of 250ms, up to 3 times. See issue #1842.
Build with go 1.25.3; the Lambda runtime is provided.al2023 on arm64.

` + "```go" + `
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := s.limiter.Wait(ctx); err != nil { // 10 requests/s, burst 20
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
}
` + "```" + `

2026-12-02T10:38:52.123Z level=info msg="request done" status=200 latency_ms=812 tokens_in=1534 tokens_out=402 route=bedrock/us-east-1 order=100234567890123 ip=10.0.12.7
{"id":"chatcmpl-8f3a2b","object":"chat.completion","created":1733135932,"model":"gpt-4.1-mini","usage":{"prompt_tokens":1534,"completion_tokens":402}}
@Override public String toString() { return "Point(" + x + ", " + y + ")"; } // see task-1234 and sk-8
| Region | p50 | p99 |
|---|---|---|
| eu-west-1 | 41.2 | 188.0 |
Thanks @alice for the review; the npm package is @types/node@20.11.5, and the image is logo@2x.png.
`

// dirtyChunk holds one of each kind among ordinary text.
var dirtyChunk = "Hi, I'm Jane (jane.doe@example.com, +44 20 7946 0958). My card is 4111 1111 1111 1111 and my IBAN DE89 3704 0044 0532 0130 00.\n" +
	"The deploy script sets OPENAI_API_KEY=" + openAIKey + " and AWS_ACCESS_KEY_ID=" + awsKeyID + ".\n"

func textOf(chunk string, size int) string {
	return strings.Repeat(chunk, size/len(chunk)+1)[:size]
}

func benchCheck(b *testing.B, text string) {
	c := newChecker(b, config.Guardrail{Mask: config.LocalPII, Block: []string{`(?i)ignore previous instructions`}})
	texts := []string{text}
	ctx := context.Background()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Check(ctx, guardrail.Input, texts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckClean1KB(b *testing.B)   { benchCheck(b, textOf(cleanChunk, 1<<10)) }
func BenchmarkCheckClean140KB(b *testing.B) { benchCheck(b, textOf(cleanChunk, 140<<10)) }
func BenchmarkCheckDirty1KB(b *testing.B) {
	text := textOf(dirtyChunk+cleanChunk[:1024-len(dirtyChunk)-1]+"\n", 1<<10)
	benchCheck(b, text)
}

// BenchmarkMask is the masker alone, without the block pattern's regular expression, which
// is the operator's cost rather than the masker's.
func BenchmarkMask(b *testing.B) {
	c := allBuiltins(b)
	for _, bc := range []struct {
		name, text string
	}{
		{"Clean1KB", textOf(cleanChunk, 1<<10)},
		{"Clean140KB", textOf(cleanChunk, 140<<10)},
		{"Dirty1KB", textOf(dirtyChunk, 1<<10)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				c.Mask(bc.text)
			}
		})
	}
}

// BenchmarkRegexpBaseline is what the scanner replaces: one regular expression per built-in
// kind (looser than the recognizers, with no Luhn or mod-97 check), run over the same clean
// text. It is here to keep the comparison honest as either side changes.
func BenchmarkRegexpBaseline(b *testing.B) {
	res := []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b`),
		regexp.MustCompile(`\+[1-9][0-9 ().-]{7,18}[0-9]|\(?\b[2-9][0-9]{2}\)?[ .-]?[0-9]{3}[.-][0-9]{4}\b`),
		regexp.MustCompile(`\b(?:[0-9][ -]?){12,18}[0-9]\b`),
		regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`),
		regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{20,}|AKIA[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{36}|AIza[A-Za-z0-9_-]{35}|eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)`),
	}
	text := textOf(cleanChunk, 140<<10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		for _, re := range res {
			re.FindAllStringIndex(text, -1)
		}
	}
}
