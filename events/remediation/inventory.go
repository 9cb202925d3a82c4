package remediation

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/routestate"
)

// Placement is where a route's upstream runs, in the terms of its provider's health feed.
type Placement struct {
	Cloud  string // "aws" (AWS Health) or "gcp" (Google Cloud Service Health)
	Kind   string // the connection kind: bedrock or vertex
	Region string // the connection's region (bedrock) or location (vertex)
}

// healthFeeds says which connection kinds a provider health feed covers, and which of the
// feed's service names each depends on. AWS Health names Bedrock "BEDROCK" in detail.service;
// Service Health names products in full, and every Vertex AI product's name starts with
// "Vertex" (Vertex AI Online Prediction, Vertex Gemini API, ...).
var healthFeeds = map[string]struct {
	cloud   string
	service func(name string) bool
}{
	"bedrock": {"aws", func(s string) bool { return strings.EqualFold(s, "BEDROCK") }},
	"vertex":  {"gcp", func(s string) bool { return strings.HasPrefix(strings.ToLower(s), "vertex") }},
}

// AffectedBy reports whether an incident is about this placement: its cloud, a service the
// kind depends on, and the placement's region or "global". A route on a multi-region or
// global location is only affected by incidents that name that location.
func (p Placement) AffectedBy(in routestate.Incident) bool {
	feed, ok := healthFeeds[p.Kind]
	if !ok || feed.cloud != in.Cloud || !slices.ContainsFunc(in.Services, feed.service) {
		return false
	}
	return slices.ContainsFunc(in.Regions, func(r string) bool { return r == p.Region || r == "global" })
}

func (p Placement) String() string { return p.Kind + " in " + p.Region }

// Inventory is the gateway's routes on providers that have a health feed, with where each
// runs: read from the gateway's own config, so a provider incident can cool routes before
// any of them has failed.
type Inventory struct {
	routes map[string]Placement
	// Unplaced lists routes on such providers whose region could not be read (a ${VAR} unset
	// in this function's environment), with the reason: incidents never cool them.
	Unplaced []string
}

// ParseInventory reads the routes of a gateway config. It reads only kinds, regions and
// routes, with ${VAR} expanded from getenv: no secrets are resolved and no connection is
// switched off by enabled_if, so it also lists routes a gateway may switch on later.
func ParseInventory(data []byte, getenv func(string) string) (*Inventory, error) {
	var doc struct {
		Connections map[string]struct {
			Kind     string `yaml:"kind"`
			Region   string `yaml:"region"`
			Location string `yaml:"location"`
		} `yaml:"connections"`
		Models map[string]struct {
			Routes []struct {
				Connection string `yaml:"connection"`
				Model      string `yaml:"model"`
			} `yaml:"routes"`
		} `yaml:"models"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("route inventory: %w", err)
	}
	inv := &Inventory{routes: map[string]Placement{}}
	places := map[string]Placement{}
	unplaced := map[string]string{}
	for name, c := range doc.Connections {
		kind, err := config.ExpandEnv(c.Kind, getenv)
		if _, tracked := healthFeeds[kind]; err != nil || !tracked {
			continue
		}
		raw := c.Location
		if kind == "bedrock" {
			raw = c.Region
			if raw == "" {
				// The SDK's own default, which the gateway's Bedrock provider uses too.
				raw = firstSet(getenv, "AWS_REGION", "AWS_DEFAULT_REGION")
			}
		}
		region, err := config.ExpandEnv(raw, getenv)
		switch {
		case err != nil:
			unplaced[name] = err.Error()
		case region == "":
			unplaced[name] = "no region or location"
		default:
			places[name] = Placement{Cloud: healthFeeds[kind].cloud, Kind: kind, Region: region}
		}
	}
	for _, m := range doc.Models {
		for _, r := range m.Routes {
			id := r.Connection + "/" + r.Model
			if p, ok := places[r.Connection]; ok {
				inv.routes[id] = p
			} else if why, ok := unplaced[r.Connection]; ok {
				inv.Unplaced = append(inv.Unplaced, id+": "+why)
			}
		}
	}
	sort.Strings(inv.Unplaced)
	inv.Unplaced = slices.Compact(inv.Unplaced)
	return inv, nil
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// NewInventory builds an inventory from route ids and placements (tests, tools).
func NewInventory(routes map[string]Placement) *Inventory {
	return &Inventory{routes: maps.Clone(routes)}
}

// Place returns where a route runs, if it is on a provider with a health feed.
func (inv *Inventory) Place(route string) (Placement, bool) {
	if inv == nil {
		return Placement{}, false
	}
	p, ok := inv.routes[route]
	return p, ok
}

// On lists the routes an incident is about, sorted.
func (inv *Inventory) On(in routestate.Incident) []string {
	if inv == nil {
		return nil
	}
	var out []string
	for id, p := range inv.routes {
		if p.AffectedBy(in) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Len is the number of placed routes.
func (inv *Inventory) Len() int {
	if inv == nil {
		return 0
	}
	return len(inv.routes)
}

// LoadInventory reads the gateway's config from where the gateway itself takes it
// (FNGATE_CONFIG_YAML, FNGATE_CONFIG, the packaged file, the embedded default; see
// boot.ReadConfig) and returns its inventory and where the config came from. The templates
// give the remediation function the gateway's config for this.
func LoadInventory(getenv func(string) string, files boot.Files) (*Inventory, string, error) {
	data, from, err := boot.ReadConfig(getenv, files)
	if err != nil {
		return nil, "", err
	}
	inv, err := ParseInventory(data, getenv)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", from, err)
	}
	return inv, from, nil
}

// LogAttrs describes the inventory for a function's start-up line.
func (inv *Inventory) LogAttrs(from string) []any {
	return []any{slog.String("inventory_from", from), slog.Int("inventory_routes", inv.Len()), slog.Any("inventory_unplaced", inv.Unplaced)}
}
