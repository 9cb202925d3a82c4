package remediation

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Mode decides whether planned changes are written.
type Mode string

const (
	// DryRun logs each plan and emits its metric, and never changes a route. The default.
	DryRun Mode = "dry_run"
	// Apply writes each planned change once, with a snapshot for rollback.
	Apply Mode = "apply"
)

// Defaults, documented in docs/remediation.md.
const (
	DefaultBurstErrors = 5
	DefaultBurstWindow = time.Minute
	DefaultCooldown    = 5 * time.Minute
	DefaultMaxEventAge = 15 * time.Minute
	// DefaultIncidentCooldown bounds a provider incident's cooldown when no further news
	// arrives (a lost resolution); each update of the open incident extends it.
	DefaultIncidentCooldown = time.Hour
	DefaultClaimTTL         = 24 * time.Hour
)

// Policy holds the decision thresholds.
type Policy struct {
	// BurstErrors transient errors (rate_limited, overloaded, unavailable) on one route within
	// BurstWindow cool the route for Cooldown.
	BurstErrors int
	BurstWindow time.Duration
	Cooldown    time.Duration
	// MaxEventAge: older errors are stale and change nothing (a dead-letter redrive, a
	// backlog), so a day-old auth error cannot disable a route that works today.
	MaxEventAge time.Duration
	// IncidentCooldown is how long an open provider incident cools its routes, renewed by
	// the incident's updates and ended by its resolution.
	IncidentCooldown time.Duration
	// ClaimTTL is how long a delivery id is remembered; it must outlast the platform's
	// redelivery (EventBridge retries for up to 24 hours).
	ClaimTTL time.Duration
}

// DefaultPolicy returns the documented defaults.
func DefaultPolicy() Policy {
	return Policy{
		BurstErrors: DefaultBurstErrors,
		BurstWindow: DefaultBurstWindow,
		Cooldown:    DefaultCooldown,
		MaxEventAge: DefaultMaxEventAge,
		ClaimTTL:    DefaultClaimTTL,

		IncidentCooldown: DefaultIncidentCooldown,
	}
}

// Config is a handler's settings.
type Config struct {
	Mode   Mode
	Policy Policy
}

// Environment variables read by ConfigFromEnv.
const (
	EnvMode        = "REMEDIATION_MODE"
	EnvBurstErrors = "REMEDIATION_BURST_ERRORS"
	EnvBurstWindow = "REMEDIATION_BURST_WINDOW"
	EnvCooldown    = "REMEDIATION_COOLDOWN"
	EnvMaxEventAge = "REMEDIATION_MAX_EVENT_AGE"

	EnvIncidentCooldown = "REMEDIATION_INCIDENT_COOLDOWN"
)

// ConfigFromEnv reads the settings; anything unset takes its default, so an empty
// environment means dry-run with the default policy. A value that does not parse is an
// error: a handler should not start with a policy nobody asked for.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{Mode: DryRun, Policy: DefaultPolicy()}
	switch m := strings.ToLower(strings.TrimSpace(getenv(EnvMode))); m {
	case "", "dry_run", "dry-run", "dryrun":
	case "apply":
		c.Mode = Apply
	default:
		return c, fmt.Errorf("%s=%q: use dry_run (the default) or apply", EnvMode, m)
	}
	if v := getenv(EnvBurstErrors); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("%s=%q: want a whole number of errors, at least 1", EnvBurstErrors, v)
		}
		c.Policy.BurstErrors = n
	}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{{EnvBurstWindow, &c.Policy.BurstWindow}, {EnvCooldown, &c.Policy.Cooldown}, {EnvMaxEventAge, &c.Policy.MaxEventAge},
		{EnvIncidentCooldown, &c.Policy.IncidentCooldown}} {
		v := getenv(d.env)
		if v == "" {
			continue
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive duration such as 90s or 5m", d.env, v)
		}
		*d.dst = dur
	}
	return c, nil
}
