package gateway_test

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkGatewayGuardrailLocal is the local guardrail's cost per request on input, each
// request a new prompt (a repeated one is its verdict cache's), beside the same route
// without it; the stream's output is checked in windows (its text is the same each time, so
// after the first request the windows' verdicts come from the cache: the figure is the
// windowing's own cost).
func BenchmarkGatewayGuardrailLocal(b *testing.B) {
	up := benchUpstream(b)
	g := newBenchGateway(b, fmt.Sprintf(`
auth: none
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
guardrails:
  pii: {kind: local, mask: [email, phone, card, iban, api_key]}
models:
  bench: {routes: [{connection: up, model: x}]}
  guarded: {guardrails: [{name: pii, on: input}, {name: pii, on: output}], routes: [{connection: up, model: x}]}
`, up.URL))
	for _, model := range []string{"bench", "guarded"} {
		for _, stream := range []bool{false, true} {
			name := model
			if stream {
				name += "/stream"
			}
			b.Run(name, func(b *testing.B) {
				client := g.Client()
				b.ReportAllocs()
				defer reportCPU(b)()
				i := 0
				for b.Loop() {
					i++
					body := `{"model":"` + model + `","stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Summarise the plot of novel ` + strconv.Itoa(i) + ` in one hundred and fifty words, please."}]}`
					resp, err := client.Post(g.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatal(resp.StatusCode)
					}
				}
			})
		}
	}
}
