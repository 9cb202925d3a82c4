package config_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// TestRegionSettings: the region section and counters.across_regions are checked, each
// refusal naming the setting and what it needs; unset, the gateway is the single-region one
// (one item per key).
func TestRegionSettings(t *testing.T) {
	const rest = "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	two := "region: {name: us-east-1, residency: us, regions: [us-east-1, eu-west-1]}\n"
	for _, c := range []struct {
		name, yaml string
		refusal    string // "" when accepted
		across     string
	}{
		{"unset", "", "", ""},
		{"one_item", "counters: {across_regions: one_item}\n", "", config.AcrossOneItem},
		{"per_region over dynamodb", two + "counters: {store: dynamodb, table: fngate-counters, across_regions: per_region}\n", "", config.AcrossPerRegion},
		{"per_region over memory (the simulation)", two + "counters: {store: memory, across_regions: per_region}\n", "", config.AcrossPerRegion},
		{"home with its region", two + "counters: {store: dynamodb, table: fngate-counters, region: us-east-1, across_regions: home}\n", "", config.AcrossHome},
		{"home without a region", two + "counters: {store: dynamodb, table: fngate-counters, across_regions: home}\n", "counters.across_regions: home needs", ""},
		{"per_region without regions", "region: {name: us-east-1}\ncounters: {store: memory, across_regions: per_region}\n", "per_region needs region.name and region.regions", ""},
		{"per_region on firestore", two + "counters: {store: firestore, project: p, across_regions: per_region}\n", "strongly consistent", ""},
		{"an unknown mode", "counters: {across_regions: sharded}\n", "must be one_item, per_region or home", ""},
		{"regions without a name", "region: {regions: [us-east-1, eu-west-1]}\n", "region.name is not", ""},
		{"regions without this one", "region: {name: ap-south-1, regions: [us-east-1, eu-west-1]}\n", "must include this instance's region", ""},
		{"a region twice", "region: {name: us-east-1, regions: [us-east-1, us-east-1]}\n", "each region is named once", ""},
		{"a bad residency", "region: {name: us-east-1, residency: \"u s\"}\n", "region.residency", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse(context.Background(), []byte(c.yaml+rest), config.Options{Getenv: func(string) string { return "" }})
			if c.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("err = %v; want one saying %q", err, c.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Counters.AcrossRegions != c.across {
				t.Fatalf("across_regions = %q; want %q", cfg.Counters.AcrossRegions, c.across)
			}
			if c.across == config.AcrossPerRegion && (cfg.Counters.Here != "us-east-1" || !slices.Equal(cfg.Counters.Regions, []string{"us-east-1", "eu-west-1"})) {
				t.Fatalf("per_region's regions = %q of %q; want region's", cfg.Counters.Here, cfg.Counters.Regions)
			}
		})
	}
}
