package config

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"time"
)

// Rate caps how fast a key may call: requests and tokens (input plus output) per minute.
// Zero or absent is no limit.
type Rate struct {
	RequestsPerMinute int64 `yaml:"requests_per_minute"`
	TokensPerMinute   int64 `yaml:"tokens_per_minute"`
	// ToolCallsPerMinute limits the key's tools/call messages on /mcp.
	ToolCallsPerMinute int64 `yaml:"tool_calls_per_minute"`
}

// Budget caps what a key may spend on priced models (and on any model a cloud guardrail,
// which charges, checks), in USD per UTC day and per UTC calendar month. Zero or absent is
// no limit.
type Budget struct {
	USDPerDay   float64 `yaml:"usd_per_day"`
	USDPerMonth float64 `yaml:"usd_per_month"`
}

// ModelLimits are the limits of a key's requests to the models one glob matches, counted
// apart from (and in addition to) the key's own.
type ModelLimits struct {
	Rate   *Rate   `yaml:"rate"`
	Budget *Budget `yaml:"budget"`
}

// KeyLimits are a key's rate limit, budget and per-model limits. Each of the three replaces
// the same part of key_defaults when it is set, even empty (`rate: {}` frees a key from the
// default rate).
type KeyLimits struct {
	Rate     *Rate                   `yaml:"rate"`
	Budget   *Budget                 `yaml:"budget"`
	PerModel map[string]*ModelLimits `yaml:"per_model"`
	// Cache opts the key's requests into the response cache, or out of it (cache.go).
	Cache *Cache `yaml:"cache"`
	// Guardrails are added to those of the models the key calls (guardrails.go).
	Guardrails []GuardrailUse `yaml:"guardrails"`
}

// Effective returns k with each part it leaves unset taken from defaults (nil: none).
func (k KeyLimits) Effective(defaults *KeyLimits) KeyLimits {
	if defaults == nil {
		return k
	}
	if k.Rate == nil {
		k.Rate = defaults.Rate
	}
	if k.Budget == nil {
		k.Budget = defaults.Budget
	}
	if k.PerModel == nil {
		k.PerModel = defaults.PerModel
	}
	if k.Cache == nil {
		k.Cache = defaults.Cache
	}
	if k.Guardrails == nil {
		k.Guardrails = defaults.Guardrails
	}
	return k
}

// Limited reports whether any limit is set.
func (k KeyLimits) Limited() bool {
	if k.Rate.set() || k.Budget.set() {
		return true
	}
	for _, m := range k.PerModel {
		if m != nil && (m.Rate.set() || m.Budget.set()) {
			return true
		}
	}
	return false
}

// Globs returns the per-model globs in a fixed order.
func (k KeyLimits) Globs() []string {
	out := make([]string, 0, len(k.PerModel))
	for g := range k.PerModel {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

func (r *Rate) set() bool {
	return r != nil && (r.RequestsPerMinute > 0 || r.TokensPerMinute > 0 || r.ToolCallsPerMinute > 0)
}
func (b *Budget) set() bool { return b != nil && (b.USDPerDay > 0 || b.USDPerMonth > 0) }

// What happens when the counter store cannot be reached, and the counters' defaults.
const (
	StoreErrorOpen   = "open"
	StoreErrorClosed = "closed"

	// DefaultCountersTimeout bounds each counter call: a DynamoDB or Firestore write takes a
	// few milliseconds, and a request must never wait long on its limits.
	DefaultCountersTimeout = 250 * time.Millisecond
	// DefaultCountersFile is where the file store keeps the counters of `make run`.
	DefaultCountersFile = ".fngate/counters.json"
)

// Counters says where the rate-limit and budget counters live. Every instance of a gateway
// must share them for a limit to hold: memory is one process's alone.
type Counters struct {
	// Store is memory, file, dynamodb or firestore (store.go), with the settings of its kind
	// (the fields below are those of the counters alone) and each call's timeout
	// (DefaultCountersTimeout when 0). An empty kind is the platform's shared store (DynamoDB
	// on Lambda when COUNTERS_TABLE is set, Firestore on Cloud Functions when
	// COUNTERS_PROJECT is), else memory, and may be given the settings of those two.
	Store `yaml:",inline"`
	// OnStoreError is what a request gets when the store fails or does not answer within
	// Timeout: open (default) serves it uncounted, closed refuses it with a 503.
	OnStoreError string `yaml:"on_store_error"`

	Region   string `yaml:"region"`   // dynamodb
	Endpoint string `yaml:"endpoint"` // dynamodb: an endpoint override (tests)
	Prefix   string `yaml:"prefix"`   // firestore: collection name prefix
	Shards   int    `yaml:"shards"`   // firestore: documents per key

	// AcrossRegions is how a deployment in several regions counts (region.go): one_item
	// (the default, also when empty), per_region or home.
	AcrossRegions string `yaml:"across_regions"`
	// Here and Regions are region.name and region.regions, for per_region (set by validation).
	Here    string   `yaml:"-"`
	Regions []string `yaml:"-"`
}

var countersStore = storeSection{
	name:  "counters",
	kinds: []string{StoreMemory, StoreFile, StoreDynamoDB, StoreFirestore},
	settings: []storeSetting{{StoreFile, "path"}, {StoreDynamoDB, "table"}, {StoreDynamoDB, "region"}, {StoreDynamoDB, "endpoint"},
		{StoreFirestore, "project"}, {StoreFirestore, "database"}, {StoreFirestore, "prefix"}, {StoreFirestore, "shards"}},
	// Lambda counts in DynamoDB when COUNTERS_TABLE is set and Cloud Functions in Firestore
	// when COUNTERS_PROJECT is, with the config's settings winning over the environment's.
	platform: []string{StoreDynamoDB, StoreFirestore},
	own:      []string{"on_store_error", "across_regions"},
	timeout:  DefaultCountersTimeout,
}

// Limited reports whether any key is held to a limit, which is when counters are used at all.
// With a key store named, stored keys may be given limits at any time, so counters are.
func (c *Config) Limited() bool {
	if c.KeyStore.Named() {
		return true
	}
	for i := range c.Keys {
		if c.KeyLimitsOf(&c.Keys[i]).Limited() {
			return true
		}
	}
	return false
}

// KeyLimitsOf returns the limits key k is held to: its own, else key_defaults'.
func (c *Config) KeyLimitsOf(k *Key) KeyLimits { return k.KeyLimits.Effective(c.KeyDefaults) }

func (c *Config) validateLimits(bad *problems) {
	if c.KeyDefaults != nil {
		if len(c.Keys) == 0 && !c.KeyStore.Named() {
			bad.add("key_defaults", ": no keys are configured (in keys or a key_store), so there is no key to hold to them (limits apply to gateway keys)")
		}
		c.KeyDefaults.validate("key_defaults", bad)
	}
	for i := range c.Keys {
		c.Keys[i].KeyLimits.validate(fmt.Sprintf("keys[%d]", i), bad)
	}
	c.Counters.validate(bad)
}

func (cn *Counters) validate(bad *problems) {
	shards := ""
	if cn.Shards != 0 {
		shards = strconv.Itoa(cn.Shards)
	}
	cn.Store.validate(bad, &countersStore, map[string]string{"region": cn.Region, "endpoint": cn.Endpoint, "prefix": cn.Prefix, "shards": shards})
	switch cn.OnStoreError {
	case "":
		cn.OnStoreError = StoreErrorOpen
	case StoreErrorOpen, StoreErrorClosed:
	default:
		bad.add("counters.on_store_error", " must be open or closed, got %q", cn.OnStoreError)
	}
	if cn.Kind == StoreFile && cn.Path == "" {
		cn.Path = DefaultCountersFile
	}
	if cn.Shards < 0 {
		bad.add("counters.shards", " must not be negative")
	}
}

func (k *KeyLimits) validate(p string, bad *problems) {
	k.Rate.validate(p+".rate", bad)
	k.Budget.validate(p+".budget", bad)
	for _, g := range k.Globs() {
		mp := p + ".per_model." + g
		if _, err := path.Match(g, ""); err != nil || g == "" {
			bad.add(mp, ": bad model glob %q", g)
		}
		if m := k.PerModel[g]; m != nil {
			m.Rate.validate(mp+".rate", bad)
			m.Budget.validate(mp+".budget", bad)
		}
	}
}

func (r *Rate) validate(p string, bad *problems) {
	if r != nil && (r.RequestsPerMinute < 0 || r.TokensPerMinute < 0 || r.ToolCallsPerMinute < 0) {
		bad.add(p, ": limits must not be negative")
	}
}

// maxUSD keeps budgets within what the counters hold (nano-dollars in an int64).
const maxUSD = 1e9

func (b *Budget) validate(p string, bad *problems) {
	if b == nil {
		return
	}
	for name, v := range map[string]float64{"usd_per_day": b.USDPerDay, "usd_per_month": b.USDPerMonth} {
		if v < 0 || v > maxUSD || math.IsNaN(v) {
			bad.add(p+"."+name, " must be between 0 and %g", float64(maxUSD))
		}
	}
}

// Validate checks limits given outside a config file (the admin API's keys), as a config
// key's are checked; p names them in the messages.
func (k *KeyLimits) Validate(p string) error {
	var bad problems
	k.validate(p, &bad)
	return bad.err()
}
