package main

import (
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
)

// registerVertex adds kind vertex: the provider itself (providers_vertex.go), or with -tags
// novertex a stand-in that refuses a vertex connection with how to build it in
// (providers_novertex.go). The Vertex AI SDK (cloud.google.com/go/aiplatform and
// google.golang.org/api) is most of what a first build downloads, about 655 of 680 MB, for a
// provider the embedded default only switches on with GOOGLE_CLOUD_PROJECT set; the AWS SDK
// behind Bedrock and the DynamoDB counter store is about 22 MB and always built in.
var registerVertex func(providers.Registry)

// registry is every provider the local server ships.
func registry() providers.Registry {
	r := providers.Registry{}
	mock.Register(r)
	openaicompat.Register(r)
	anthropic.Register(r)
	bedrock.Register(r, sdkconfig.Load)
	registerVertex(r)
	return r
}
