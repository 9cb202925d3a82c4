package counters

import (
	"context"
	"sort"
	"sync"
	"time"
)

// History is the usage of gateway keys per UTC day and model, kept HistoryDays: what every
// request used, limited or not, added once it has ended. It lives beside the counters, in
// items of its own (a key's day, with a field per model), so the hot counter items stay small
// and each admission stays one write. A HistoryStore is the counters' store that keeps it.
type History interface {
	// AddUsage adds u to key's usage of model on the UTC day of at.
	AddUsage(ctx context.Context, key string, at time.Time, model string, u Usage) error
	// Usage returns key's usage on the UTC days from from to to (both included), a row per
	// day and model that has any, oldest first.
	Usage(ctx context.Context, key string, from, to time.Time) ([]DayUsage, error)
}

// HistoryDays is how long a day's usage is kept: a year and its month, so a year ago is
// still comparable with today.
const HistoryDays = 400

// Usage is what requests used: their count, their tokens and their cost (nano-USD; zero on
// free models).
type Usage struct {
	Requests     int64
	InputTokens  int64
	OutputTokens int64
	CostNanoUSD  int64
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.Requests += v.Requests
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CostNanoUSD += v.CostNanoUSD
}

// DayUsage is one key's usage of one model on one UTC day.
type DayUsage struct {
	Day   string // 2006-01-02
	Model string
	Usage
}

// Day is the UTC day of t, as DayUsage names it.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// days lists the UTC days from from to to, both included, at most HistoryDays of them.
func days(from, to time.Time) []string {
	var out []string
	for d := from.UTC().Truncate(24 * time.Hour); !d.After(to.UTC()) && len(out) < HistoryDays; d = d.AddDate(0, 0, 1) {
		out = append(out, Day(d))
	}
	return out
}

// MemoryHistory is a History in process memory (one instance; tests).
type MemoryHistory struct {
	mu sync.Mutex
	m  map[string]map[string]map[string]Usage // key -> day -> model
}

// NewMemoryHistory returns an empty history.
func NewMemoryHistory() *MemoryHistory {
	return &MemoryHistory{m: map[string]map[string]map[string]Usage{}}
}

func (h *MemoryHistory) AddUsage(_ context.Context, key string, at time.Time, model string, u Usage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	byDay := h.m[key]
	if byDay == nil {
		byDay = map[string]map[string]Usage{}
		h.m[key] = byDay
	}
	d := Day(at)
	byModel := byDay[d]
	if byModel == nil {
		byModel = map[string]Usage{}
		byDay[d] = byModel
	}
	v := byModel[model]
	v.Add(u)
	byModel[model] = v
	return nil
}

func (h *MemoryHistory) Usage(_ context.Context, key string, from, to time.Time) ([]DayUsage, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return rows(h.m[key], from, to), nil
}

// rows are one key's usage (day -> model -> usage) on the days from from to to, as Usage
// returns them.
func rows(byDay map[string]map[string]Usage, from, to time.Time) []DayUsage {
	var out []DayUsage
	for _, d := range days(from, to) {
		models := make([]string, 0, len(byDay[d]))
		for m := range byDay[d] {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			out = append(out, DayUsage{Day: d, Model: m, Usage: byDay[d][m]})
		}
	}
	return out
}

// Days lists the UTC days from from to to, both included, at most HistoryDays of them from
// from: the days a History's Usage reads.
func Days(from, to time.Time) []string { return days(from, to) }
