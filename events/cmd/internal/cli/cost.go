package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fngate/fngate/core/cost"
)

// cost prints what the gateway costs per million requests on each measured function size,
// beside always-on containers (docs/cost.md explains the model). It reads no store and
// calls no API: the figures are the benchmark's and the prices are dated constants.
func (o *op) cost(args []string) error {
	fs := o.flags("cost")
	measured := fs.String("measured", "", "figures from `make bench-sizes` (default: the run embedded in this build)")
	requests := fs.Float64("requests", 1e6, "requests a month, for the monthly column and Cloud Functions' sharing of an instance")
	profiles := fs.String("profile", "", "profiles, comma-separated (default all): "+profileNames())
	features := fs.String("features", "limits,history", "what each request reads and writes in the shared stores: limits, history, keys, cache, or none")
	hits := fs.Float64("cache-hits", 0, "with cache: the share of requests answered from it (0..1)")
	cold := fs.Float64("cold-share", cost.DefaultAssumptions.ColdShare, "the share of requests that start an instance")
	prices := fs.Bool("prices", false, "print the prices the model uses, with their sources, and stop")
	if _, err := o.parse(fs, args, 0, "cost [-measured FILE] [-requests N] [-profile P,...] [-features F,...] [-cache-hits X] [-cold-share X] [-prices] [-json]"); err != nil {
		return err
	}
	if *prices {
		if o.json {
			return json.NewEncoder(o.env.Stdout).Encode(cost.PriceTable)
		}
		cost.WritePrices(o.env.Stdout)
		return nil
	}
	r := cost.Report{RequestsPerMonth: *requests}
	var err error
	if *measured != "" {
		r.Model.Measured, err = cost.LoadMeasured(*measured)
	} else {
		r.Model.Measured, err = cost.DefaultMeasured()
	}
	if err != nil {
		return err
	}
	r.Model.Prices, r.Model.Assumptions = cost.DefaultPrices(), cost.DefaultAssumptions
	r.Model.Assumptions.ColdShare = *cold
	if *requests <= 0 || *cold < 0 || *cold > 1 || *hits < 0 || *hits > 1 {
		return fmt.Errorf("-requests must be above 0, -cold-share and -cache-hits between 0 and 1")
	}
	if r.Features, err = parseFeatures(*features); err != nil {
		return err
	}
	r.Features.CacheHits = *hits
	if *profiles == "" {
		r.Profiles = cost.Profiles
	} else {
		for _, name := range strings.Split(*profiles, ",") {
			p, err := cost.ProfileNamed(strings.TrimSpace(name))
			if err != nil {
				return fmt.Errorf("%w (profiles: %s)", err, profileNames())
			}
			r.Profiles = append(r.Profiles, p)
		}
	}
	return r.Write(o.env.Stdout)
}

func profileNames() string {
	var n []string
	for _, p := range cost.Profiles {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

func parseFeatures(s string) (cost.Features, error) {
	var f cost.Features
	for _, name := range strings.Split(s, ",") {
		switch strings.TrimSpace(name) {
		case "none", "":
		case "limits":
			f.Limits = true
		case "history":
			f.History = true
		case "keys":
			f.StoredKeys = true
		case "cache":
			f.Cache = true
		default:
			return f, fmt.Errorf("-features: %q is none of limits, history, keys, cache, none", name)
		}
	}
	return f, nil
}
