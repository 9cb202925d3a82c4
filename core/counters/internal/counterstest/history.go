package counterstest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
)

// awkwardModels are gateway model names with every character a store might take for syntax:
// paths, dots (Firestore field paths), colons, percent signs, hashes, reserved-looking
// underscores, spaces and non-ASCII.
var awkwardModels = []string{
	"anthropic/claude-3.5-sonnet:beta",
	"gpt-4.1",
	"openai/gpt-4o",
	"a.b.c",
	"__reserved__",
	"_leading",
	"100% #1 `tick`",
	"r|pipe",
	"modèle-ü",
}

// RunHistory checks that stores keep the History contract. open returns a new, empty history
// (or one on which the keys used are fresh) for each subtest.
func RunHistory(t *testing.T, open func(t *testing.T) counters.History) {
	ctx := context.Background()
	day0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	use := func(r, in, out, c int64) counters.Usage {
		return counters.Usage{Requests: r, InputTokens: in, OutputTokens: out, CostNanoUSD: c}
	}

	t.Run("an unknown key has no usage", func(t *testing.T) {
		h := open(t)
		got := usage(t, h, "nobody", day0.AddDate(0, 0, -30), day0)
		if len(got) != 0 {
			t.Fatalf("Usage of an unknown key = %+v", got)
		}
	})

	t.Run("adds sum per day and model, rows oldest first with models in order", func(t *testing.T) {
		h := open(t)
		adds := []struct {
			at    time.Time
			model string
			u     counters.Usage
		}{
			{day0.Add(10 * time.Hour), "gpt-4o", use(1, 100, 20, 3000)},
			{day0.Add(23*time.Hour + 59*time.Minute), "gpt-4o", use(1, 50, 5, 1000)},
			{day0.Add(11 * time.Hour), "claude", use(1, 7, 0, 0)},
			// The UTC day counts, whatever the clock's zone: 01:30 at +05:00 is the day before.
			{time.Date(2026, 11, 30, 1, 30, 0, 0, time.FixedZone("x", 5*3600)), "claude", use(1, 1, 1, 1)},
			{day0.Add(24 * time.Hour), "gpt-4o", use(2, 10, 10, 10)},
			{day0.AddDate(0, 0, 2), "gpt-4o", use(0, 0, 0, 0)}, // nothing used: no row needed, none wrong
		}
		for _, a := range adds {
			must(t, h.AddUsage(ctx, "app", a.at, a.model, a.u))
		}
		must(t, h.AddUsage(ctx, "other", day0, "gpt-4o", use(9, 9, 9, 9)))
		got := usage(t, h, "app", day0.AddDate(0, 0, -1), day0.AddDate(0, 0, 1))
		want := []counters.DayUsage{
			{Day: "2026-11-29", Model: "claude", Usage: use(2, 8, 1, 1)},
			{Day: "2026-11-29", Model: "gpt-4o", Usage: use(2, 150, 25, 4000)},
			{Day: "2026-11-30", Model: "gpt-4o", Usage: use(2, 10, 10, 10)},
		}
		sameRows(t, got, want)
		// A range is inclusive at both ends and holds nothing outside it.
		sameRows(t, usage(t, h, "app", day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 1).Add(time.Hour)), want[2:])
		sameRows(t, usage(t, h, "app", day0.Add(5*time.Hour), day0.Add(6*time.Hour)), want[:2])
		sameRows(t, usage(t, h, "app", day0.AddDate(0, 0, 5), day0.AddDate(0, 0, 9)), nil)
		sameRows(t, usage(t, h, "other", day0, day0), []counters.DayUsage{{Day: "2026-11-29", Model: "gpt-4o", Usage: use(9, 9, 9, 9)}})
	})

	t.Run("model names with path, field-path and reserved characters are kept apart and intact", func(t *testing.T) {
		h := open(t)
		for i, m := range awkwardModels {
			must(t, h.AddUsage(ctx, "team/app#1", day0, m, use(1, int64(i), 0, 0)))
			must(t, h.AddUsage(ctx, "team/app#1", day0.Add(time.Hour), m, use(1, int64(i), 0, 0)))
		}
		var want []counters.DayUsage
		for i, m := range awkwardModels {
			want = append(want, counters.DayUsage{Day: "2026-11-29", Model: m, Usage: use(2, 2*int64(i), 0, 0)})
		}
		slices.SortFunc(want, func(a, b counters.DayUsage) int { return compareString(a.Model, b.Model) })
		sameRows(t, usage(t, h, "team/app#1", day0, day0), want)
		sameRows(t, usage(t, h, "team", day0, day0), nil)
	})

	t.Run("a year of days reads back in one range", func(t *testing.T) {
		h := open(t)
		first := day0.AddDate(0, 0, -(counters.HistoryDays - 1))
		for _, d := range []time.Time{first, day0.AddDate(0, -6, 0), day0} {
			must(t, h.AddUsage(ctx, "app", d, "m", use(1, 1, 1, 1)))
		}
		got := usage(t, h, "app", first, day0)
		if len(got) != 3 || got[0].Day != counters.Day(first) || got[2].Day != counters.Day(day0) {
			t.Fatalf("a %d-day range = %+v; want its first, middle and last day", counters.HistoryDays, got)
		}
	})

	t.Run("concurrent adds all count", func(t *testing.T) {
		h := open(t)
		const racers, each = 8, 5
		var wg sync.WaitGroup
		for r := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if err := h.AddUsage(ctx, "hot", day0.Add(time.Duration(r)*time.Minute), "gpt-4o", use(1, 10, 2, 5)); err != nil {
						t.Errorf("AddUsage: %v", err)
					}
				}
			}()
		}
		wg.Wait()
		const n = racers * each
		sameRows(t, usage(t, h, "hot", day0, day0), []counters.DayUsage{{Day: "2026-11-29", Model: "gpt-4o", Usage: use(n, 10*n, 2*n, 5*n)}})
	})
}

func compareString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func usage(t *testing.T, h counters.History, key string, from, to time.Time) []counters.DayUsage {
	t.Helper()
	got, err := h.Usage(context.Background(), key, from, to)
	must(t, err)
	return got
}

// sameRows compares rows, ignoring rows of nothing at all (a store may keep a zero add).
func sameRows(t *testing.T, got, want []counters.DayUsage) {
	t.Helper()
	got = slices.DeleteFunc(slices.Clone(got), func(r counters.DayUsage) bool { return r.Usage == counters.Usage{} })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("usage rows =\n  %+v\nwant\n  %+v", got, want)
	}
}
