//go:build !bedrockguard

package main

import (
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/guardrail/local"
)

// guardrails of the default build: local guardrails only. A Bedrock guardrail's client
// (bedrockguard, with ApplyGuardrail's types) is 0.13 MB of the bootstrap most deployments
// never call, so it comes with -tags bedrockguard (guardrails_bedrock.go), which the
// Makefile adds when CONFIG names one. A config that names one without it stops at load
// (the gateway builds every guardrail in gateway.New), naming the tag: silently checking
// nothing would let through what the guardrail was there to block.
func guardrails() func(*config.Guardrail) (guardrail.Checker, error) {
	return func(g *config.Guardrail) (guardrail.Checker, error) {
		switch g.Kind {
		case config.GuardrailLocal:
			return local.New(g)
		case config.GuardrailBedrock:
			return nil, fmt.Errorf("kind bedrock: this bootstrap was built without Bedrock guardrails; build it with LAMBDA_TAGS=lambda.norpc,bedrockguard (make package and sam build add the tag themselves when CONFIG names a bedrock guardrail)")
		case config.GuardrailModelArmor:
			return nil, fmt.Errorf("kind model-armor is not built into this binary (the Lambda bootstrap leaves Google's libraries out); use it on Cloud Functions or the local server")
		}
		return nil, fmt.Errorf("unknown guardrail kind %q", g.Kind)
	}
}
