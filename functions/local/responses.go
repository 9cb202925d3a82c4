package main

import (
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
)

// responseStore opens the store of stored responses the config names: memory unless it
// says otherwise (make run), or files under a directory, which outlive a restart. The
// cloud stores belong to the functions: the Lambda function opens DynamoDB, the Cloud
// Functions gateway Firestore. It returns nil for store: none, and what it opened, for the
// start-up log line.
func responseStore(cfg *config.Config) (responsestore.Store, string, error) {
	r := cfg.Responses
	switch r.Kind {
	case "", config.StoreMemory:
		return responsestore.NewMemory(), "memory", nil
	case config.StoreNone:
		return nil, "none", nil
	case config.StoreFile:
		dir := r.Path
		if dir == "" {
			dir = config.DefaultResponsesDir
		}
		f, err := responsestore.OpenFile(dir)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", cfg.Locate("responses.path"), err)
		}
		return f, "file " + dir, nil
	}
	owner := map[string]string{config.StoreDynamoDB: "the Lambda function's", config.StoreFirestore: "the Cloud Functions gateway's"}[r.Kind]
	return nil, "", fmt.Errorf("%s: the local server keeps stored responses in memory or in files (store: memory or file); %s is %s store",
		cfg.Locate("responses.store"), r.Kind, owner)
}
