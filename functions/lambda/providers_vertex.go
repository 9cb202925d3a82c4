//go:build vertex

package main

import "github.com/fngate/fngate/core/providers/vertex"

// Built with -tags vertex, the bootstrap also serves kind vertex. It is left out by default
// because aiplatform's gRPC and protobuf stack roughly doubles the binary and slows every
// cold start, for a provider most Lambda deployments never call.
func init() { optionalKinds = append(optionalKinds, vertex.Register) }
