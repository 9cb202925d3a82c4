package main

import (
	"strings"
	"testing"
	"time"
)

// A config naming a Bedrock guardrail stops the default bootstrap at load and names the tag
// that builds it in; built with it, the bootstrap starts; local guardrails need no tag.
func TestBedrockGuardrailNeedsItsBuild(t *testing.T) {
	const base = "auth: none\nconnections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}], guardrails: [{name: g, on: input}]}}\n"
	cfg := base + `guardrails: {g: {kind: bedrock, id: gr-123, version: "1", region: us-east-1}}` + "\n"
	in := startBin(t, bootstrapWith(t, "lambda.norpc"), "FNGATE_CONFIG_YAML="+cfg, "AWS_REGION=us-east-1")
	select {
	case <-in.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the bootstrap started with a Bedrock guardrail it cannot call")
	}
	if in.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(in.out.String(), "LAMBDA_TAGS=lambda.norpc,bedrockguard") {
		t.Errorf("exit %d, output %q; want the tag named", in.cmd.ProcessState.ExitCode(), in.out.String())
	}
	for _, c := range []struct{ tags, cfg string }{
		{"lambda.norpc", base + "guardrails: {g: {kind: local, mask: [email]}}\n"},
		{"lambda.norpc,bedrockguard", base + "guardrails: {g: {kind: local, mask: [email]}}\n"},
		{"lambda.norpc,bedrockguard", cfg},
	} {
		tags := c.tags
		in := startBin(t, bootstrapWith(t, tags), "FNGATE_CONFIG_YAML="+c.cfg, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKIDGUARD", "AWS_SECRET_ACCESS_KEY=guard")
		select {
		case <-in.exited:
			t.Errorf("%s: the guardrail stopped the bootstrap: %s", tags, in.out.String())
		case <-time.After(2 * time.Second):
		}
	}
}
