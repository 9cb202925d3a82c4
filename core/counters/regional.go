package counters

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Regional counts a key in an item per region, each written by its own region alone and
// summed on read: the counters' per_region mode for a DynamoDB global table, where two
// regions' concurrent writes to one item keep only the last writer's, and a budget would
// undercount without bound.
//
// A Take reads the other regions' items from this region's replica (as they stand after
// replication, up to one delay behind), and charges this region's item under a condition
// that leaves room for them: each limited counter's Max less what the others hold. This
// region's item is exact (one region's instances write one replica, atomically), so what can
// be admitted past a limit is what the other regions admitted within the last replication
// delay, and never more than (regions-1) times the limit (docs/design.md, "Across regions").
type Regional struct {
	// Store is this region's replica of the shared store.
	Store Store
	// Here is this region's name; Others the deployment's other regions.
	Here   string
	Others []string
}

// NewRegional returns s counting per region: here among regions (here may be in the list).
func NewRegional(s Store, here string, regions []string) *Regional {
	r := &Regional{Store: s, Here: here}
	for _, o := range regions {
		if o != here {
			r.Others = append(r.Others, o)
		}
	}
	return r
}

// RegionItem names a key's item of one region. Key names and stored ids hold no '@'.
func RegionItem(key, region string) string { return key + "@" + region }

// others reads the other regions' items and sums them counter by counter, each kind only
// from the items in the newest window seen (a region whose clock is behind has counts of a
// window that has passed).
func (r *Regional) others(ctx context.Context, key string, w Windows) (Counts, error) {
	read := make([]Counts, len(r.Others))
	errs := make([]error, len(r.Others))
	var wg sync.WaitGroup
	for i, o := range r.Others {
		wg.Go(func() { read[i], errs[i] = r.Store.Read(ctx, RegionItem(key, o), w) })
	}
	wg.Wait()
	sum := Counts{Windows: w, Values: map[Counter]int64{}}
	for i := range read {
		if errs[i] != nil {
			return Counts{}, errs[i]
		}
		sum.Windows = sum.Windows.Later(read[i].Windows)
	}
	for _, c := range read {
		for counter, v := range c.Values {
			if c.Windows.Of(counter.Kind) == sum.Windows.Of(counter.Kind) {
				sum.Values[counter] += v
			}
		}
	}
	return sum, nil
}

func (r *Regional) Take(ctx context.Context, key string, w Windows, amounts []Amount) (Counts, bool, error) {
	others, err := r.others(ctx, key, w)
	if err != nil {
		return Counts{}, false, err
	}
	room := make([]Amount, len(amounts))
	for i, a := range amounts {
		room[i] = a
		if a.Limited {
			room[i].Max = a.Max - others.Values[a.Counter]
		}
	}
	c, ok, err := r.Store.Take(ctx, RegionItem(key, r.Here), w.Later(others.Windows), room)
	if err != nil {
		return c, ok, err
	}
	for counter := range c.Values {
		if c.Windows.Of(counter.Kind) == others.Windows.Of(counter.Kind) {
			c.Values[counter] += others.Values[counter]
		}
	}
	return c, ok, nil
}

func (r *Regional) Add(ctx context.Context, key string, w Windows, amounts []Amount) error {
	return r.Store.Add(ctx, RegionItem(key, r.Here), w, amounts)
}

func (r *Regional) Read(ctx context.Context, key string, w Windows) (Counts, error) {
	others, err := r.others(ctx, key, w)
	if err != nil {
		return Counts{}, err
	}
	c, err := r.Store.Read(ctx, RegionItem(key, r.Here), w.Later(others.Windows))
	if err != nil {
		return Counts{}, err
	}
	for counter, v := range others.Values {
		if c.Windows.Of(counter.Kind) == others.Windows.Of(counter.Kind) {
			c.Values[counter] += v
		}
	}
	return c, nil
}

var _ Store = (*Regional)(nil)

// InRegions returns s as a deployment across regions counts in it: s itself when regions is
// empty (one region, or across_regions other than per_region: the config's counters.Here and
// counters.Regions are set for per_region alone), else s counting per region.
func InRegions(s Store, here string, regions []string) Store {
	if len(regions) == 0 {
		return s
	}
	return NewRegional(s, here, regions)
}

// HistoryInRegions is InRegions for the usage history: a day's usage in an item per key and
// region, so that two regions' adds to one day never overwrite each other, summed on read.
func HistoryInRegions(h History, here string, regions []string) History {
	if len(regions) == 0 {
		return h
	}
	return &RegionalHistory{History: h, Here: here, Regions: regions}
}

// RegionalHistory keeps usage in a history item per key and region (HistoryInRegions).
type RegionalHistory struct {
	History History
	Here    string
	Regions []string // every region, this one included
}

func (r *RegionalHistory) AddUsage(ctx context.Context, key string, at time.Time, model string, u Usage) error {
	return r.History.AddUsage(ctx, RegionItem(key, r.Here), at, model, u)
}

// Usage sums the regions' rows by day and model, oldest day first and models in order.
func (r *RegionalHistory) Usage(ctx context.Context, key string, from, to time.Time) ([]DayUsage, error) {
	type row struct{ day, model string }
	sum := map[row]Usage{}
	for _, region := range r.Regions {
		rows, err := r.History.Usage(ctx, RegionItem(key, region), from, to)
		if err != nil {
			return nil, err
		}
		for _, d := range rows {
			u := sum[row{d.Day, d.Model}]
			u.Add(d.Usage)
			sum[row{d.Day, d.Model}] = u
		}
	}
	out := make([]DayUsage, 0, len(sum))
	for k, u := range sum {
		out = append(out, DayUsage{Day: k.day, Model: k.model, Usage: u})
	}
	slices.SortFunc(out, func(a, b DayUsage) int {
		return cmp.Or(strings.Compare(a.Day, b.Day), strings.Compare(a.Model, b.Model))
	})
	return out, nil
}

var _ History = (*RegionalHistory)(nil)
