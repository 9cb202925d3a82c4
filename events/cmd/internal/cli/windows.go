package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
)

// windowUsage shows keys' counts in the current windows beside their limits:
//
//	usage [-config PATH] [-counters SPEC] [KEY...]
//
// The config (-config, env FNGATE_CONFIG) gives the limits and, unless -counters says
// otherwise, the store; it is parsed as the gateway parses it, with the same environment,
// but secret references are not resolved. SPEC (env FNGATE_COUNTERS) is file:PATH,
// dynamodb:TABLE or firestore:PROJECT (-counters-prefix, -counters-database). Without KEY,
// every key with a limit.
func (c *remediator) windowUsage(ctx context.Context, fs *flag.FlagSet, args []string, getenv func(string) string, now time.Time) error {
	stderr, stdout := fs.Output(), c.stdout
	cfgPath := fs.String("config", getenv("FNGATE_CONFIG"), "the gateway config: limits and counters store (env FNGATE_CONFIG)")
	spec := fs.String("counters", getenv("FNGATE_COUNTERS"), "counter store: file:PATH, dynamodb:TABLE or firestore:PROJECT (env FNGATE_COUNTERS); default: the config's")
	prefix := fs.String("counters-prefix", getenv("COUNTERS_PREFIX"), "Firestore collection prefix (default fngate_)")
	database := fs.String("counters-database", getenv("COUNTERS_DATABASE"), "Firestore database (default (default))")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	var cfg *config.Config
	if *cfgPath != "" {
		var err error
		cfg, err = loadConfig(ctx, *cfgPath, getenv)
		if err != nil {
			return err
		}
	}
	cc, err := countersOf(cfg, *spec, *prefix, *database)
	if err != nil {
		return err
	}
	store, closeStore, err := openCounters(ctx, cc)
	if err != nil {
		return err
	}
	defer closeStore()

	keys := fs.Args()
	if len(keys) == 0 {
		if cfg == nil {
			fmt.Fprintln(stderr, "usage:", c.prog, "usage [-config PATH] [-counters SPEC] KEY... (without -config, name the keys)")
			return errUsage
		}
		for i := range cfg.Keys {
			if cfg.KeyLimitsOf(&cfg.Keys[i]).Limited() {
				keys = append(keys, cfg.Keys[i].Name)
			}
		}
	}
	w := counters.At(now)
	rows := []usageRow{}
	for _, key := range keys {
		got, err := store.Read(ctx, key, w)
		if err != nil {
			return err
		}
		rows = append(rows, usageRows(cfg, key, got)...)
	}
	if *c.json {
		return printJSON(stdout, rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSCOPE\tCOUNTER\tUSED\tLIMIT\tREMAINING\tRESETS")
	for _, r := range rows {
		scope, limit, remaining := r.Scope, "-", "-"
		if scope == "" {
			scope = "(key)"
		}
		if r.Limit != nil {
			limit, remaining = amount(r.Counter, *r.Limit), amount(r.Counter, *r.Remaining)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Key, scope, r.Counter, amount(r.Counter, r.Used), limit, remaining, r.Resets.Format(time.RFC3339))
	}
	return tw.Flush()
}

// usageRow is one counter of one key: counts, or dollars for the spend counters. Scope is a
// per_model glob, empty for the key as a whole; Limit and Remaining are absent without one.
type usageRow struct {
	Key       string    `json:"key"`
	Scope     string    `json:"scope,omitempty"`
	Counter   string    `json:"counter"`
	Used      float64   `json:"used"`
	Limit     *float64  `json:"limit,omitempty"`
	Remaining *float64  `json:"remaining,omitempty"`
	Resets    time.Time `json:"resets"`
}

// loadConfig parses the gateway's config as the gateway does, with the same environment,
// but leaves secret references unresolved: the operator's tool needs no secret.
func loadConfig(ctx context.Context, path string, getenv func(string) string) (*config.Config, error) {
	return config.Load(ctx, path, config.Options{Getenv: getenv, Secrets: map[string]config.SecretResolver{
		config.SchemeAWS: unresolved{}, config.SchemeGCP: unresolved{}}})
}

// unresolved stands in for the secret resolvers. Each reference stands for a value of its
// own, so two keys whose secrets are references are not taken for one secret used twice.
type unresolved struct{}

func (unresolved) Resolve(_ context.Context, ref string) (string, error) {
	return "unresolved:" + ref, nil
}

// countersOf is the store to read: the spec when given, else the config's.
func countersOf(cfg *config.Config, spec, prefix, database string) (config.Counters, error) {
	var c config.Counters
	if cfg != nil {
		c = cfg.Counters
	}
	if spec != "" {
		kind, arg, ok := strings.Cut(spec, ":")
		if !ok || arg == "" {
			return c, fmt.Errorf("counters %q: want file:PATH, dynamodb:TABLE or firestore:PROJECT", spec)
		}
		c = config.Counters{Store: config.Store{Kind: kind}, Region: c.Region, Endpoint: c.Endpoint, Shards: c.Shards}
		switch kind {
		case config.StoreFile:
			c.Path = arg
		case config.StoreDynamoDB:
			c.Table = arg
		case config.StoreFirestore:
			c.Project = arg
		default:
			return c, fmt.Errorf("counters %q: unknown kind %q (file, dynamodb, firestore)", spec, kind)
		}
	}
	if c.Prefix == "" {
		c.Prefix = prefix
	}
	if c.Database == "" {
		c.Database = database
	}
	if c.Kind == "" || c.Kind == config.StoreMemory {
		return c, errors.New("counters live in the gateway's memory, which this tool cannot read: give -counters (file:PATH, dynamodb:TABLE or firestore:PROJECT) or a config whose counters.store is one of them")
	}
	return c, nil
}

func openCounters(ctx context.Context, c config.Counters) (counters.Store, func(), error) {
	switch c.Kind {
	case config.StoreFile:
		s, err := counters.OpenFile(c.Path)
		return s, func() {}, err
	case config.StoreDynamoDB:
		s, err := dynamocounters.Open(ctx, sdkconfig.Load, c)
		return s, func() {}, err
	}
	s, closeClient, err := firestorecounters.Open(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return s, func() { _ = closeClient() }, nil
}

// usageRows renders one key's counts: every counter of its rules when the config gives them
// (with the limit and what remains), else every counter the store holds.
func usageRows(cfg *config.Config, key string, got counters.Counts) []usageRow {
	type limit struct {
		scope string
		kind  counters.Kind
		max   float64 // 0: none
	}
	var rows []limit
	if cfg != nil {
		for i := range cfg.Keys {
			if cfg.Keys[i].Name != key {
				continue
			}
			kl := cfg.KeyLimitsOf(&cfg.Keys[i])
			add := func(scope string, r *config.Rate, b *config.Budget) {
				var rate config.Rate
				var budget config.Budget
				if r != nil {
					rate = *r
				}
				if b != nil {
					budget = *b
				}
				rows = append(rows, limit{scope, counters.Requests, float64(rate.RequestsPerMinute)}, limit{scope, counters.Tokens, float64(rate.TokensPerMinute)},
					limit{scope, counters.SpendDay, budget.USDPerDay}, limit{scope, counters.SpendMonth, budget.USDPerMonth})
			}
			add("", kl.Rate, kl.Budget)
			for _, g := range kl.Globs() {
				if m := kl.PerModel[g]; m != nil {
					add(g, m.Rate, m.Budget)
				}
			}
		}
	}
	if rows == nil {
		for c := range got.Values {
			rows = append(rows, limit{c.Scope, c.Kind, 0})
		}
		slices.SortFunc(rows, func(a, b limit) int {
			if a.scope != b.scope {
				return strings.Compare(a.scope, b.scope)
			}
			return int(a.kind) - int(b.kind)
		})
	}
	out := make([]usageRow, 0, len(rows))
	for _, r := range rows {
		used := float64(got.Value(r.scope, r.kind))
		if r.kind == counters.SpendDay || r.kind == counters.SpendMonth {
			used /= 1e9 // nano-USD
		}
		row := usageRow{Key: key, Scope: r.scope, Counter: counterName(r.kind), Used: used, Resets: got.Windows.End(r.kind)}
		if r.max > 0 {
			limit, remaining := r.max, max(r.max-used, 0)
			row.Limit, row.Remaining = &limit, &remaining
		}
		out = append(out, row)
	}
	return out
}

func counterName(k counters.Kind) string {
	return [...]string{counters.Requests: "requests/min", counters.Tokens: "tokens/min", counters.SpendDay: "usd/day", counters.SpendMonth: "usd/month"}[k]
}

// amount prints a count, or dollars for the spend counters.
func amount(counter string, v float64) string {
	if strings.HasPrefix(counter, "usd/") {
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
