package gateway

import (
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/guardrail/local"
)

func newLocalChecker(g *config.Guardrail) (guardrail.Checker, error) { return local.New(g) }
