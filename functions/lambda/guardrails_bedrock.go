//go:build bedrockguard

package main

import (
	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/guardrail/kinds"
)

// guardrails of a bootstrap built with -tags bedrockguard: local and Bedrock guardrails
// (Model Armor stays refused: Google's libraries are left out of the Lambda build).
func guardrails() func(*config.Guardrail) (guardrail.Checker, error) {
	return kinds.Factory(awsconf.FromEnvironment, nil)
}
