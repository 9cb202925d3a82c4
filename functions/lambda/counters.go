package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/gateway"
)

// EnvCountersTable names the DynamoDB table of the keys' rate limits and budgets (the
// templates create it). It is the store when the config's counters section names none, and
// the table when the config says dynamodb without one.
const EnvCountersTable = "COUNTERS_TABLE"

// warmUp bounds the background read that opens the DynamoDB connection during init.
const warmUp = 5 * time.Second

// counterStore gives the gateway the counters its keys' limits need, and opens the client's
// connection in the background while the instance starts.
func counterStore(getenv func(string) string, cfg *config.Config, logger *slog.Logger, opt *gateway.Options) error {
	if !cfg.Limited() {
		return nil
	}
	c := cfg.Counters
	table := getenv(EnvCountersTable)
	switch {
	case c.Kind == "" && table != "", c.Kind == config.StoreDynamoDB:
		if c.Table == "" {
			c.Table = table
		}
		s, err := dynamocounters.Open(context.Background(), awsconf.FromEnvironment, c)
		if err != nil {
			return err
		}
		counters.Warm(s, warmUp)
		opt.Counters = counters.InRegions(s, c.Here, c.Regions) // across_regions: per_region
		return nil
	case c.Kind == "", c.Kind == config.StoreMemory:
		// Each instance would count alone: a limit per instance, not per key.
		logger.Warn("counters in memory: every Lambda instance counts its own requests, so limits multiply with instances; set " + EnvCountersTable + " (the templates do)")
		opt.Counters = counters.NewMemory()
		return nil
	}
	return fmt.Errorf("counters.store %s is not available on Lambda: use dynamodb (or memory for one instance)", c.Kind)
}
