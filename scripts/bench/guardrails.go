package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/scripts/internal/proc"
)

// guardrailsConfig is the gateway of the guardrail scenarios: the same route without a
// guardrail, with the local one (every built-in entity masked) on input and on both ways,
// and with a Bedrock guardrail (the ApplyGuardrail fake, answering after a set round trip) on
// input and on output; the paced models stream from an upstream that writes one chunk every
// 2 ms, about model speed, so that a window takes longer to fill than the service answers.
const guardrailsConfig = `
limits: {max_in_flight: 5000}
auth: none
connections:
  up: {kind: openai-compatible, base_url: "http://%s/v1"}
  paced: {kind: openai-compatible, base_url: "http://%s/v1"}
guardrails:
  pii: {kind: local, mask: [email, phone, card, iban, api_key]}
  cloud: {kind: bedrock, id: ` + bedrockfake.GuardrailID + `, version: "1", region: us-east-1}
models:
  bench/plain: {routes: [{connection: up, model: bench}]}
  bench/local-in: {guardrails: [{name: pii, on: input, mode: mask}], routes: [{connection: up, model: bench}]}
  bench/local-both: {guardrails: [{name: pii, on: input, mode: mask}, {name: pii, on: output, mode: mask}], routes: [{connection: up, model: bench}]}
  bench/cloud-in: {guardrails: [{name: cloud, on: input}], routes: [{connection: up, model: bench}]}
  bench/cloud-out: {guardrails: [{name: cloud, on: output}], routes: [{connection: up, model: bench}]}
  bench/paced-plain: {routes: [{connection: paced, model: bench}]}
  bench/paced-cloud-out: {guardrails: [{name: cloud, on: output}], routes: [{connection: paced, model: bench}]}
`

// guardRoundTrip is the Bedrock fake's answer time: an in-region ApplyGuardrail call.
const guardRoundTrip = 20 * time.Millisecond

// guardedChatWire asks each request anew, and for an answer of its own: a guardrail's
// verdict cache answers what it has seen, so a repeated prompt or answer would be checked
// once for the whole run.
var guardedChatWire = wire{chatWire.path, func(model string, stream bool) string {
	return strings.Replace(chatWire.body(model, stream), prompt, prompt+" "+uniqueAnswerMarker+requestMarker+")", 1)
}, chatWire.done}

var guardrailScenarios = []string{
	"guardrails: local, non-stream, 16 in flight",
	"guardrails: local, 200-chunk stream, 16 in flight",
	"guardrails: cloud, non-stream, 1 in flight",
	"guardrails: cloud, 200-chunk stream, 1 in flight",
	"guardrails: cloud, 200-chunk stream at 2 ms a chunk, 1 in flight",
}

// guardrails measures what a guardrail costs: the local one's CPU per request and per
// stream, and a cloud one's added latency, which is its round trip per check (a whole
// answer's one; a stream's per window of 1,000 characters when the upstream outpaces the
// service, else one window's filling plus one round trip).
func (b *bench) guardrails(tmp, gwBin, self, upAddr string) error {
	if !b.wantsAny(guardrailScenarios) {
		return nil
	}
	pacedAddr, fakeAddr, addr := proc.FreeAddr(), proc.FreeAddr(), proc.FreeAddr()
	paced, err := proc.Start("upstream-paced", "", self, "-mode", "upstream", "-addr", pacedAddr, "-hold", "2ms")
	if err != nil {
		return err
	}
	defer paced.Stop()
	fake, err := proc.Start("bedrock-guardrails", "", self, "-mode", "bedrock-guardrails", "-addr", fakeAddr, "-hold", guardRoundTrip.String())
	if err != nil {
		return err
	}
	defer fake.Stop()
	env := []string{"AWS_ENDPOINT_URL=http://" + fakeAddr, "AWS_ACCESS_KEY_ID=AKIDBENCHGUARD", "AWS_SECRET_ACCESS_KEY=bench",
		"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PROFILE="}
	cfg := writeConfig(tmp, "guardrails.yaml", fmt.Sprintf(guardrailsConfig, upAddr, pacedAddr))
	gw, err := proc.StartEnv("gateway-guardrails", filepath.Join(tmp, "gateway-guardrails.log"), env, gwBin, "-config", cfg, "-addr", addr, "-route-state", "off")
	if err != nil {
		return err
	}
	defer gw.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range []string{pacedAddr, fakeAddr, addr} {
		if err := proc.WaitListening(ctx, a); err != nil {
			return err
		}
	}
	base, pid := "http://"+addr, gw.Cmd.Process.Pid
	gwt := func(name, model string) target { return target{name, base, model, pid, guardedChatWire, ""} }
	direct := target{"direct", "http://" + upAddr, "bench", 0, guardedChatWire, ""}
	local := []target{direct, gwt("fngate, no guardrail", "bench/plain"), gwt("fngate, local guardrail on input", "bench/local-in"),
		gwt("fngate, local guardrail on input and output", "bench/local-both")}
	b.measure(scenario{guardrailScenarios[0], 16, false, local})
	b.measure(scenario{guardrailScenarios[1], 16, true, local})
	rtt := guardRoundTrip.String()
	cloud := []target{direct, gwt("fngate, no guardrail", "bench/plain"), gwt("fngate, Bedrock guardrail ("+rtt+") on input", "bench/cloud-in"),
		gwt("fngate, Bedrock guardrail ("+rtt+") on output", "bench/cloud-out")}
	b.measure(scenario{guardrailScenarios[2], 1, false, cloud})
	b.measure(scenario{guardrailScenarios[3], 1, true, cloud})
	pacedTargets := []target{{"direct", "http://" + pacedAddr, "bench", 0, guardedChatWire, ""}, gwt("fngate, no guardrail", "bench/paced-plain"),
		gwt("fngate, Bedrock guardrail ("+rtt+") on output", "bench/paced-cloud-out")}
	b.measure(scenario{guardrailScenarios[4], 1, true, pacedTargets})
	return nil
}

// wantsAny reports whether -only selects any of labels (a group's processes start only then).
func (b *bench) wantsAny(labels []string) bool {
	if b.opt.only == nil {
		return true
	}
	for _, l := range labels {
		if b.opt.only.MatchString(l) {
			return true
		}
	}
	return false
}

// serveBedrockGuardrails runs the ApplyGuardrail fake until killed, answering after hold.
func serveBedrockGuardrails(addr string, hold time.Duration) error {
	g := bedrockfake.NewGuardrailsHandler()
	g.SetDelay(hold)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: g}).Serve(ln)
}
