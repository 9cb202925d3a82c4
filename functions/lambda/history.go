package main

import (
	"context"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/gateway"
)

// historyStore gives the gateway the keys' usage history (docs/usage-history.md): items of
// their own in the counters' DynamoDB table, through the counters' store when the keys have
// limits, else through a store of its own on the same table, since unlimited keys' usage is
// kept too. Without that table (counters in memory, or no COUNTERS_TABLE) there is none: a
// history in one instance's memory would be lost with it.
func historyStore(getenv func(string) string, cfg *config.Config, opt *gateway.Options) error {
	if h, ok := opt.Counters.(counters.History); ok {
		opt.History = h
		return nil
	}
	c := cfg.Counters
	table := getenv(EnvCountersTable)
	if !(c.Kind == "" && table != "" || c.Kind == config.StoreDynamoDB) {
		return nil
	}
	if c.Table == "" {
		c.Table = table
	}
	s, err := dynamocounters.Open(context.Background(), awsconf.FromEnvironment, c)
	if err != nil {
		return err
	}
	opt.History = counters.HistoryInRegions(s, c.Here, c.Regions) // across_regions: per_region
	return nil
}

// invokeFlush is what must leave the process after each invoke's response and before the
// invoke ends (flush.go): the usage history and the response cache's writes the gateway
// queued (queued says it may queue either), then telemetry's spans. Nil when there is none.
func invokeFlush(gw *gateway.Gateway, queued bool, tel *exporter) func(context.Context) error {
	switch {
	case !queued && tel == nil:
		return nil
	case !queued:
		return tel.flush
	}
	return func(ctx context.Context) error {
		err := gw.Flush(ctx)
		if tel != nil {
			if terr := tel.flush(ctx); err == nil {
				err = terr
			}
		}
		return err
	}
}
