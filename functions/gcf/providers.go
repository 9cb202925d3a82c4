package gcf

import (
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/providers/vertex"
)

// registry is every provider kind the Cloud Functions build ships; each import is linked in
// and initialised at every cold start, so kinds are added one package at a time.
func registry() providers.Registry {
	r := providers.Registry{}
	mock.Register(r)
	openaicompat.Register(r)
	anthropic.Register(r)
	bedrock.Register(r, sdkconfig.Load)
	vertex.Register(r)
	return r
}
