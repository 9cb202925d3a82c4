package main

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/dynamostore"
)

// responseStore opens the store of stored responses the config names. The local server has
// all of them: memory (make run's, and what an unset store means here), files under a
// directory, which outlive a restart and are shared by servers on one machine, and DynamoDB
// and Firestore, shared as the functions share them (Firestore's not under -tags novertex:
// firestore.go). It returns nil for store: none, what
// it opened, for the start-up log line, and a func that closes it.
func responseStore(ctx context.Context, cfg *config.Config) (responsestore.Store, string, func(), error) {
	r := cfg.Responses
	none := func() {}
	switch r.Kind {
	case "", config.StoreMemory:
		return responsestore.NewMemory(), "memory", none, nil
	case config.StoreNone:
		return nil, "none", none, nil
	case config.StoreFile:
		dir := r.Path
		if dir == "" {
			dir = config.DefaultResponsesDir
		}
		f, err := responsestore.OpenFile(dir)
		if err != nil {
			return nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("responses.path"), err)
		}
		return f, "file " + dir, none, nil
	case config.StoreDynamoDB:
		s, err := dynamostore.Open(ctx, sdkconfig.Load, r)
		if err != nil {
			return nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("responses.store"), err)
		}
		return s, "dynamodb table " + r.Table, none, nil
	case config.StoreFirestore:
		s, where, closeClient, err := openFirestoreResponses(ctx, r)
		if err != nil {
			return nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("responses.store"), err)
		}
		return s, "firestore " + where, func() { _ = closeClient() }, nil
	}
	return nil, "", none, fmt.Errorf("%s: store %q", cfg.Locate("responses.store"), r.Kind)
}
