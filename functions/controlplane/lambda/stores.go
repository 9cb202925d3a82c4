package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/dynamostore"
	"github.com/fngate/fngate/core/routestate"
	routedynamo "github.com/fngate/fngate/core/routestate/dynamostore"
)

// The tables the templates give the control plane (the gateway has the same names).
const (
	EnvKeysTable       = "KEYS_TABLE"
	EnvCountersTable   = "COUNTERS_TABLE"
	EnvRouteStateTable = "ROUTE_STATE_TABLE"
)

// stores are what the admin API is given; any may be nil (that part of the API answers 503,
// or, for keys, lists the config's alone).
type stores struct {
	keys     keystore.Store
	history  counters.History
	counters counters.Store
	routes   routestate.Store
	describe struct{ keys, usage, routes string }
}

// openStores opens the config's stores, each table named by the config or, when it names
// none, the environment; nothing here touches the network (the clients dial on first use).
func openStores(ctx context.Context, cfg *config.Config, getenv func(string) string) (*stores, error) {
	st := &stores{}
	st.describe.keys, st.describe.usage, st.describe.routes = "none", "none", "none"

	ks := cfg.KeyStore
	table := getenv(EnvKeysTable)
	switch {
	case ks.Kind == "" && table != "", ks.Kind == config.StoreDynamoDB:
		if ks.Table == "" {
			ks.Table = table
		}
		if ks.Table == "" {
			return nil, errors.New("key_store dynamodb: name its table (key_store.table or " + EnvKeysTable + ")")
		}
		s, err := dynamostore.Open(ctx, awsconf.FromEnvironment, ks)
		if err != nil {
			return nil, err
		}
		st.keys, st.describe.keys = s, "dynamodb:"+ks.Table
	case ks.Kind == "", ks.Kind == config.StoreNone:
	default:
		// memory and file are one process's or one machine's: each instance would keep keys
		// of its own.
		return nil, fmt.Errorf("key_store.store %s is not available on Lambda: use dynamodb (the templates set %s)", ks.Kind, EnvKeysTable)
	}

	c := cfg.Counters
	table = getenv(EnvCountersTable)
	switch {
	case c.Kind == "" && table != "", c.Kind == config.StoreDynamoDB:
		if c.Table == "" {
			c.Table = table
		}
		s, err := dynamocounters.Open(ctx, awsconf.FromEnvironment, c)
		if err != nil {
			return nil, err
		}
		// across_regions: per_region reads every region's items, wherever the control plane runs.
		st.counters, st.history = counters.InRegions(s, c.Here, c.Regions), counters.HistoryInRegions(s, c.Here, c.Regions)
		st.describe.usage = "dynamodb:" + c.Table
	case c.Kind == "", c.Kind == config.StoreMemory:
		// The gateway's memory counters are its own instance's: there is nothing to read.
	default:
		return nil, fmt.Errorf("counters.store %s is not available on Lambda: use dynamodb", c.Kind)
	}

	if table := getenv(EnvRouteStateTable); table != "" {
		awsCfg, err := awsconf.FromEnvironment(ctx, awsconf.Options{})
		if err != nil {
			return nil, err
		}
		st.routes, st.describe.routes = routedynamo.New(dynamodb.NewFromConfig(awsCfg), table), "dynamodb:"+table
	}
	return st, nil
}
