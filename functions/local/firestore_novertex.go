//go:build novertex

package main

import (
	"context"
	"errors"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsestore"
)

// A build without the Google Cloud SDK refuses the Firestore stores: their client needs the
// modules -tags novertex saves a first run from downloading.

func openFirestoreCounters(context.Context, config.Counters) (counters.Store, func() error, error) {
	return nil, nil, leftOut("counters.store")
}

func openFirestoreResponses(context.Context, config.Responses) (responsestore.Store, string, func() error, error) {
	return nil, "", nil, leftOut("responses.store")
}

func openFirestoreKeys(context.Context, config.KeyStore) (keystore.Store, string, func() error, error) {
	return nil, "", nil, leftOut("key_store.store")
}

func openFirestoreCache(context.Context, config.ResponseCache) (responsecache.Store, string, func() error, error) {
	return nil, "", nil, leftOut("response_cache.store")
}

func leftOut(field string) error {
	return errors.New(field + " firestore is left out of this build of the local server with the Vertex AI provider " +
		"(-tags novertex: the Firestore client is the same Google Cloud SDK); build it in with `make run VERTEX=1` or `go run ./functions/local`")
}

func openFirestoreMCPSessions(context.Context, config.MCPSessions) (mcpsessions.Store, string, func() error, error) {
	return nil, "", nil, leftOut("mcp_sessions.store")
}
