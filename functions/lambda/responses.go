package main

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/dynamostore"
)

// EnvResponsesTable names the DynamoDB table of stored responses; the templates set it.
// The config's responses.table, when given, wins.
const EnvResponsesTable = "RESPONSES_TABLE"

// responseStore opens the DynamoDB store of stored responses: when the config says
// store: dynamodb, or says nothing and the environment names a table. Memory and files are
// refused: instances share neither, so a conversation continued on another instance would
// find nothing. It returns nil for none, and what it opened, for the start-up log line. The
// client contacts DynamoDB only at the first call.
func responseStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (responsestore.Store, string, error) {
	r := cfg.Responses
	if r.Table == "" {
		r.Table = getenv(EnvResponsesTable)
	}
	switch r.Kind {
	case "":
		if r.Table == "" {
			return nil, "none", nil
		}
	case config.StoreDynamoDB:
		if r.Table == "" {
			return nil, "", fmt.Errorf("%s: store dynamodb names no table: set responses.table or %s", cfg.Locate("responses.store"), EnvResponsesTable)
		}
	case config.StoreNone:
		return nil, "none", nil
	default:
		return nil, "", fmt.Errorf("%s: the Lambda function keeps stored responses in DynamoDB (store: dynamodb, or none); %s would be each instance's own, so a conversation continued on another instance would find nothing",
			cfg.Locate("responses.store"), r.Kind)
	}
	s, err := dynamostore.Open(ctx, awsconf.FromEnvironment, r)
	if err != nil {
		return nil, "", err
	}
	return s, "dynamodb table " + r.Table, nil
}
