// Package kinds builds the checker of any configured guardrail: the gateway's
// GuardrailFactory for the platforms. Model Armor comes in as a constructor the platform
// passes (ModelArmor), so a binary without Google's libraries (Lambda's default) does not
// carry them for a kind it then refuses with the reason.
package kinds

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/guardrail/bedrockguard"
	"github.com/fngate/fngate/core/guardrail/local"
)

// Constructor makes the checker of one kind.
type Constructor func(g *config.Guardrail) (guardrail.Checker, error)

// Factory builds local and bedrock guardrails (the AWS config from load, read once per
// guardrail: local sources only, no call), and model-armor ones with armor (nil: refused).
func Factory(load awsconf.Loader, armor Constructor) func(*config.Guardrail) (guardrail.Checker, error) {
	return func(g *config.Guardrail) (guardrail.Checker, error) {
		switch g.Kind {
		case config.GuardrailLocal:
			return local.New(g)
		case config.GuardrailBedrock:
			cfg, err := load(context.Background(), awsconf.Options{Region: g.Region})
			if err != nil {
				return nil, err
			}
			return bedrockguard.New(g, cfg)
		case config.GuardrailModelArmor:
			if armor == nil {
				return nil, fmt.Errorf("kind model-armor is not built into this binary (the Lambda bootstrap leaves Google's libraries out); use it on Cloud Functions or the local server")
			}
			return armor(g)
		}
		return nil, fmt.Errorf("unknown guardrail kind %q", g.Kind)
	}
}
