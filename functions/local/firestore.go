//go:build !novertex

package main

import (
	"context"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/keystore"
	keyfirestore "github.com/fngate/fngate/core/keystore/firestorestore"
	"github.com/fngate/fngate/core/mcpsessions"
	mcpfirestore "github.com/fngate/fngate/core/mcpsessions/firestorestore"
	"github.com/fngate/fngate/core/responsecache"
	cachefirestore "github.com/fngate/fngate/core/responsecache/firestorestore"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/firestorestore"
)

// The Firestore stores' client is the same Google Cloud module graph as the Vertex AI SDK,
// and is left out with it (firestore_novertex.go).
var openFirestoreCounters = firestorecounters.Open

// openFirestoreResponses opens the Firestore response store and says where it is.
func openFirestoreResponses(ctx context.Context, r config.Responses) (responsestore.Store, string, func() error, error) {
	s, closeClient, err := firestorestore.Open(ctx, r)
	if err != nil {
		return nil, "", nil, err
	}
	return s, s.Where(), closeClient, nil
}

// openFirestoreKeys opens the Firestore key store and says where it is.
func openFirestoreKeys(ctx context.Context, ks config.KeyStore) (keystore.Store, string, func() error, error) {
	s, closeClient, err := keyfirestore.Open(ctx, ks)
	if err != nil {
		return nil, "", nil, err
	}
	return s, s.Where(), closeClient, nil
}

// openFirestoreCache opens the Firestore store of the response cache and says where it is.
func openFirestoreCache(ctx context.Context, c config.ResponseCache) (responsecache.Store, string, func() error, error) {
	s, closeClient, err := cachefirestore.Open(ctx, c)
	if err != nil {
		return nil, "", nil, err
	}
	return s, s.Where(), closeClient, nil
}

// openFirestoreMCPSessions opens the Firestore store of MCP sessions and says where it is.
func openFirestoreMCPSessions(ctx context.Context, s config.MCPSessions) (mcpsessions.Store, string, func() error, error) {
	st, closeClient, err := mcpfirestore.Open(ctx, s)
	if err != nil {
		return nil, "", nil, err
	}
	return st, st.Where(), closeClient, nil
}
