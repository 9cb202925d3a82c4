package main

import (
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/guardrail/modelarmor"
)

// armorGuardrails builds model-armor guardrails with Application Default Credentials.
func armorGuardrails(g *config.Guardrail) (guardrail.Checker, error) {
	return modelarmor.New(g, modelarmor.Options{})
}
