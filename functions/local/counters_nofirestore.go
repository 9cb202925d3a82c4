//go:build novertex

package main

import (
	"context"
	"errors"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
)

// openFirestoreCounters refuses counters.store firestore in a build without the Google Cloud
// SDK: the Firestore client needs the modules -tags novertex saves a first run from
// downloading.
func openFirestoreCounters(context.Context, config.Counters) (counters.Store, func() error, error) {
	return nil, nil, errors.New("counters.store firestore is left out of this build of the local server with the Vertex AI provider " +
		"(-tags novertex: the Firestore client is the same Google Cloud SDK); build it in with `make run VERTEX=1` or `go run ./functions/local`")
}
