package main

import (
	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
)

// optionalKinds are the kinds build tags add (providers_vertex.go).
var optionalKinds []func(providers.Registry)

// registry is every provider kind the Lambda bootstrap ships. Each import here is linked into
// the binary (and its init runs at every cold start), so kinds are added one package at a
// time rather than through a catch-all; Vertex stays out unless built with -tags vertex.
func registry() providers.Registry {
	r := providers.Registry{}
	for _, register := range optionalKinds {
		register(r)
	}
	mock.Register(r)
	openaicompat.Register(r)
	anthropic.Register(r)
	bedrock.Register(r, awsconf.FromEnvironment)
	return r
}
