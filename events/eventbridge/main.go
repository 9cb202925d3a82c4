// Command eventbridge is the AWS remediation function (Lambda, provided.al2023). It accepts
// the gateway's ProviderError events from an EventBridge rule, CloudWatch Logs subscription
// batches of the gateway's log group, and the sweep schedule, and repairs route state in
// DynamoDB. See docs/remediation.md.
//
// It also takes AWS Health events for Bedrock (a rule on the default bus): an open incident
// cools the gateway's routes on that region, its resolution re-enables them.
//
// Environment: ROUTE_STATE_TABLE (required), REMEDIATION_MODE (dry_run | apply; default
// dry_run), REMEDIATION_BURST_ERRORS, REMEDIATION_BURST_WINDOW, REMEDIATION_COOLDOWN,
// REMEDIATION_MAX_EVENT_AGE, REMEDIATION_INCIDENT_COOLDOWN; the gateway's config as the
// gateway takes it (FNGATE_CONFIG_YAML, FNGATE_CONFIG, fngate.yaml in the package, else the
// embedded default), for which routes run where.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/events/remediation"
)

// EnvTable names the route-state table.
const EnvTable = "ROUTE_STATE_TABLE"

// packagedConfig is the gateway's config in the package root (`make package-remediation
// CONFIG=...`), as the gateway's own package has it.
const packagedConfig = "fngate.yaml"

// packageRoot is the directory holding the bootstrap: /var/task on Lambda.
func packageRoot() string {
	if exe, err := os.Executable(); err == nil {
		return filepath.Dir(exe)
	}
	return "."
}

func main() {
	logger := telemetry.NewLogger(os.Stdout, telemetry.FormatCloudWatch, nil)
	h, err := setup(context.Background(), logger, os.Stdout, os.Getenv)
	if err != nil {
		logger.Error("remediation function cannot start", slog.String("error", err.Error()))
		fmt.Fprintln(os.Stderr, "fngate-eventbridge:", err)
		os.Exit(1)
	}
	lambda.Start(h.Invoke)
}

// setup builds the function from its environment; metrics (EMF lines) go to stdout, where
// Lambda ships them to CloudWatch.
func setup(ctx context.Context, logger *slog.Logger, stdout io.Writer, getenv func(string) string) (*handler, error) {
	cfg, err := remediation.ConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	table := getenv(EnvTable)
	if table == "" {
		return nil, errors.New(EnvTable + " is not set: name the route-state DynamoDB table")
	}
	// The function's role credentials are in its environment; the SDK's full configuration
	// chain would add megabytes and milliseconds of cold start for nothing (see awsconf).
	awsCfg, err := awsconf.FromEnvironment(ctx, awsconf.Options{})
	if err != nil {
		return nil, err
	}
	if awsCfg.Credentials == nil {
		return nil, errors.New("no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")
	}
	// The gateway's config, read as the gateway reads it, says which routes run where: an
	// AWS Health event for Bedrock in a region cools the routes on it.
	inv, from, err := remediation.LoadInventory(getenv, boot.Files{Root: packageRoot(), Packaged: packagedConfig})
	if err != nil {
		return nil, fmt.Errorf("route inventory: %w", err)
	}
	engine := remediation.New(dynamostore.New(dynamodb.NewFromConfig(awsCfg), table), remediation.Options{
		Config:    cfg,
		Logger:    logger,
		Metrics:   remediation.NewEMFMetrics(stdout),
		Inventory: inv,
	})
	p := engine.Policy()
	logger.Info("remediation function ready", append([]any{slog.String("mode", string(engine.Mode())), slog.String("table", table),
		slog.Int("burst_errors", p.BurstErrors), slog.Duration("burst_window", p.BurstWindow),
		slog.Duration("cooldown", p.Cooldown), slog.Duration("max_event_age", p.MaxEventAge),
		slog.Duration("incident_cooldown", p.IncidentCooldown)}, inv.LogAttrs(from)...)...)
	return &handler{engine: engine, log: logger}, nil
}
