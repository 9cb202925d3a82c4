//go:build !novertex

package main

import "github.com/fngate/fngate/core/counters/firestorecounters"

// openFirestoreCounters is the Firestore counter store, whose client is the same Google Cloud
// module graph as the Vertex AI SDK and is left out with it (counters_nofirestore.go).
var openFirestoreCounters = firestorecounters.Open
