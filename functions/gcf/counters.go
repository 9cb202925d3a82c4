package gcf

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/gateway"
)

// Environment of the keys' rate limits and budgets: the Firestore database the Terraform
// module creates for them. COUNTERS_PROJECT set and no counters section in the config: the
// store is Firestore; the config's own project, database and prefix win over these.
const (
	EnvCountersProject  = "COUNTERS_PROJECT"
	EnvCountersDatabase = "COUNTERS_DATABASE"
	EnvCountersPrefix   = "COUNTERS_PREFIX"
)

// warmUp bounds the background read that opens the Firestore connection at start.
const warmUp = 10 * time.Second

// counterStore gives the gateway the counters its keys' limits need, and opens the client's
// connection in the background.
func counterStore(ctx context.Context, getenv func(string) string, cfg *config.Config, logger *slog.Logger, opt *gateway.Options) error {
	if !cfg.Limited() {
		return nil
	}
	c := cfg.Counters
	project := getenv(EnvCountersProject)
	switch {
	case c.Kind == "" && project != "", c.Kind == config.StoreFirestore:
		for field, env := range map[*string]string{&c.Project: project, &c.Database: getenv(EnvCountersDatabase), &c.Prefix: getenv(EnvCountersPrefix)} {
			if *field == "" {
				*field = env
			}
		}
		s, _, err := firestorecounters.Open(ctx, c) // the client lives as long as the instance
		if err != nil {
			return err
		}
		counters.Warm(s, warmUp)
		opt.Counters = s
		return nil
	case c.Kind == "", c.Kind == config.StoreMemory:
		logger.Warn("counters in memory: every instance counts its own requests, so limits multiply with instances; set " + EnvCountersProject + " (the Terraform module does)")
		opt.Counters = counters.NewMemory()
		return nil
	}
	return fmt.Errorf("counters.store %s is not available on Cloud Functions: use firestore (or memory for one instance)", c.Kind)
}
