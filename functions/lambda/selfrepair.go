package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/events/publish"
)

// Environment of self-repair (docs/remediation.md); both are optional.
const (
	// EnvRouteStateTable names the DynamoDB table the remediation function writes route state
	// to; the gateway reads it through a cache refreshed in the background.
	EnvRouteStateTable = "ROUTE_STATE_TABLE"
	// EnvErrorBus names the EventBridge bus provider errors are published to ("default" for
	// the account's default bus); unset, nothing is published (the CloudWatch Logs
	// subscription path needs no publisher).
	EnvErrorBus = "PROVIDER_ERROR_BUS"
)

// publishLinger is short on Lambda: the instance freezes between invocations, so a batch
// should leave while the request that produced it is still streaming.
const publishLinger = 10 * time.Millisecond

// selfRepair wires route state and error publishing into the gateway options. Neither touches
// the network here: the cache reads the table in the background and the publisher sends on
// its first error.
func selfRepair(getenv func(string) string, logger *slog.Logger, opt *gateway.Options) error {
	table, bus := getenv(EnvRouteStateTable), getenv(EnvErrorBus)
	if table == "" && bus == "" {
		return nil
	}
	awsCfg, err := awsconf.FromEnvironment(context.Background(), awsconf.Options{})
	if err != nil {
		return err
	}
	if table != "" {
		cache := routestate.NewCache(dynamostore.New(dynamodb.NewFromConfig(awsCfg), table), routestate.CacheOptions{Logger: logger})
		cache.Start(context.Background())
		opt.RouteState = cache
	}
	if bus != "" {
		if bus == "default" {
			bus = ""
		}
		pub, err := publish.New(publish.Options{Client: eventbridge.NewFromConfig(awsCfg), EventBus: bus, Linger: publishLinger, Logger: logger})
		if err != nil {
			return err
		}
		opt.OnAttempt = pub.OnAttempt
	}
	return nil
}
