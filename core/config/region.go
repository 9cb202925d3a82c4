package config

import (
	"slices"
	"strings"
)

// Region places this instance in a deployment that spans regions (docs/design.md, "Across
// regions"). Unset, the gateway is the single-region gateway it has always been.
type Region struct {
	// Name is the cloud region this instance runs in (us-east-1, europe-west4); the templates
	// give it as ${FNGATE_REGION}.
	Name string `yaml:"name"`
	// Residency is the residency label of this region (eu, us). A key pinned to another
	// residency is refused here with a 403 residency_mismatch, so that a client that reaches
	// the wrong region by DNS or by mistake never has its content processed outside its
	// residency. Empty serves every key (and keys pinned to a residency keep their routes).
	Residency string `yaml:"residency"`
	// Regions lists every region of the deployment, this one included: the counters'
	// per_region mode sums the items of these regions.
	Regions []string `yaml:"regions"`
}

// How the counters count when the deployment spans regions (counters.across_regions).
const (
	// AcrossOneItem is one item per key, written by every region: exact in one region and on a
	// strongly consistent store (a Firestore multi-region database); on a DynamoDB global
	// table written from several regions, last writer wins drops concurrent increments.
	AcrossOneItem = "one_item"
	// AcrossPerRegion is an item per key and region, each written by its region alone and
	// summed on read: no increment is ever lost, and what is admitted past a limit is bounded
	// by what the other regions admit within one replication delay.
	AcrossPerRegion = "per_region"
	// AcrossHome sends every region's counter calls to one home region's replica
	// (counters.region): exact, at the latency of a call to that region.
	AcrossHome = "home"
)

// residencyLabel is what a residency label may hold: the labels routes carry (eu, us, ap).
func residencyLabel(s string) bool { return validName(s) && !strings.Contains(s, ".") }

func (c *Config) validateRegion(bad *problems) {
	r := &c.Region
	if r.Name != "" && !validName(r.Name) {
		bad.add("region.name", ": a region name uses letters, digits, '.', '_' and '-', got %q", r.Name)
	}
	if r.Residency != "" && !residencyLabel(r.Residency) {
		bad.add("region.residency", ": a residency label uses letters, digits, '_' and '-', got %q", r.Residency)
	}
	if len(r.Regions) > 0 {
		if r.Name == "" {
			bad.add("region.regions", " is set but region.name is not: name the region this instance runs in")
		} else if !slices.Contains(r.Regions, r.Name) {
			bad.add("region.regions", ": must include this instance's region %q", r.Name)
		}
		seen := map[string]bool{}
		for _, n := range r.Regions {
			if n == "" || !validName(n) || seen[n] {
				bad.add("region.regions", ": each region is named once, with letters, digits, '.', '_' and '-', got %q", n)
			}
			seen[n] = true
		}
	}
	cn := &c.Counters
	switch cn.AcrossRegions {
	case "", AcrossOneItem: // "" is one_item: the single-region default, left as given
	case AcrossPerRegion:
		switch {
		case cn.Kind == StoreFirestore:
			bad.add("counters.across_regions", ": per_region is for stores that replicate with last writer wins (DynamoDB global tables); a Firestore multi-region database is strongly consistent, so one_item is exact there")
		case len(r.Regions) < 2:
			bad.add("counters.across_regions", ": per_region needs region.name and region.regions, the deployment's regions (at least two), to sum their items")
		}
		cn.Here, cn.Regions = r.Name, r.Regions
	case AcrossHome:
		if cn.Kind != StoreDynamoDB && cn.Kind != "" || cn.Region == "" {
			bad.add("counters.across_regions", ": home needs the dynamodb store and counters.region, the home region every region counts in")
		}
	default:
		bad.add("counters.across_regions", " must be %s, got %q", orList([]string{AcrossOneItem, AcrossPerRegion, AcrossHome}), cn.AcrossRegions)
	}
}
