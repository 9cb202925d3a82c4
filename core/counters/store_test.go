package counters_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/internal/counterstest"
)

func TestMemory(t *testing.T) {
	counterstest.Run(t, func(*testing.T) counters.Store { return counters.NewMemory() }, counterstest.Options{Atomic: true})
}

func TestFile(t *testing.T) {
	counterstest.Run(t, func(t *testing.T) counters.Store {
		s, err := counters.OpenFile(filepath.Join(t.TempDir(), "counters.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, counterstest.Options{Atomic: true})
}

// TestFileSharedByTwoHandles: two stores on one path (two processes of `make run`) see and
// respect each other's counts.
func TestFileSharedByTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counters.json")
	a, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := counters.At(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	one := []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1, Max: 1, Limited: true}}
	for i, s := range []counters.Store{a, b, a} {
		_, ok, err := s.Take(t.Context(), "app", w, one)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (i < 2) {
			t.Fatalf("take %d admitted = %v; the limit of 2 is shared", i, ok)
		}
	}
}

func TestFieldNames(t *testing.T) {
	w := counters.At(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	for _, c := range []counters.Counter{
		{Kind: counters.Requests}, {Kind: counters.SpendMonth, Scope: "anthropic/claude-*|x"}, {Kind: counters.Tokens, Scope: "a.b"},
	} {
		name := counters.Field(c, w)
		got, n, ok := counters.ParseField(name)
		if !ok || got != c || n != w.Of(c.Kind) {
			t.Errorf("ParseField(%q) = %+v, %d, %v; want %+v in window %d", name, got, n, ok, c, w.Of(c.Kind))
		}
	}
	for _, bad := range []string{"", "x|1|", "r|", "r|x|", "r1|"} {
		if _, _, ok := counters.ParseField(bad); ok {
			t.Errorf("ParseField(%q) succeeded", bad)
		}
	}
}

func TestWindows(t *testing.T) {
	at := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	w := counters.At(at)
	for _, tc := range []struct {
		k    counters.Kind
		want time.Time
	}{
		{counters.Requests, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{counters.SpendDay, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{counters.SpendMonth, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if got := w.End(tc.k); !got.Equal(tc.want) {
			t.Errorf("End(%v) at %v = %v, want %v", tc.k, at, got, tc.want)
		}
	}
	next := counters.At(at.Add(time.Second))
	if next.Minute != w.Minute+1 || next.Day != w.Day+1 || next.Month != w.Month+1 {
		t.Errorf("a second later every window rolls: %+v -> %+v", w, next)
	}
	// A clock in another zone names the same windows.
	if counters.At(at.In(time.FixedZone("x", 5*3600+1800))) != w {
		t.Error("windows depend on the clock's time zone")
	}
	if got := counters.At(time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)).End(counters.SpendMonth); !got.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("February ends %v", got)
	}
}

func TestMemoryHistory(t *testing.T) {
	counterstest.RunHistory(t, func(*testing.T) counters.History { return counters.NewMemoryHistory() })
}

func TestFileHistory(t *testing.T) {
	counterstest.RunHistory(t, func(t *testing.T) counters.History {
		s, err := counters.OpenFile(filepath.Join(t.TempDir(), "counters.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestFileHistoryBesideCounters: history and counters share the file without disturbing each
// other, a second handle reads the history, and days past HistoryDays are forgotten.
func TestFileHistoryBesideCounters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counters.json")
	a, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	old := now.AddDate(0, 0, -counters.HistoryDays-1)
	one := counters.Usage{Requests: 1, InputTokens: 3}
	if err := a.AddUsage(ctx, "app", old, "m", one); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Take(ctx, "app", counters.At(now), []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1}}); err != nil || !ok {
		t.Fatalf("take: %v %v", ok, err)
	}
	if err := a.AddUsage(ctx, "app", now, "m", one); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		day  time.Time
		want int
	}{{old, 0}, {now, 1}} {
		got, err := b.Usage(ctx, "app", tc.day, tc.day)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want || tc.want == 1 && got[0].Usage != one {
			t.Fatalf("usage on %s = %+v; want %d rows (a day %d days old is forgotten)", counters.Day(tc.day), got, tc.want, counters.HistoryDays+1)
		}
	}
	c, err := b.Read(ctx, "app", counters.At(now))
	if err != nil || c.Value("", counters.Requests) != 1 {
		t.Fatalf("counters beside the history: %+v %v", c, err)
	}
}

// TestRegional: a store counting per region keeps the Store contract; the other regions'
// items are there (empty) and are read on every take.
func TestRegional(t *testing.T) {
	counterstest.Run(t, func(*testing.T) counters.Store {
		return counters.NewRegional(counters.NewMemory(), "us-east-1", []string{"us-east-1", "eu-west-1", "ap-south-1"})
	}, counterstest.Options{Atomic: true})
}

// TestRegionalSumsTheOtherRegions: a region leaves room for what the others counted, and a
// read sums every region's item.
func TestRegionalSumsTheOtherRegions(t *testing.T) {
	shared := counters.NewMemory() // one replica, already holding every region's items
	regions := []string{"us-east-1", "eu-west-1"}
	us, eu := counters.NewRegional(shared, "us-east-1", regions), counters.NewRegional(shared, "eu-west-1", regions)
	w := counters.At(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	one := []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1, Max: 2, Limited: true}} // a limit of 3
	for i, c := range []struct {
		s    counters.Store
		want bool
	}{{us, true}, {eu, true}, {eu, true}, {us, false}, {eu, false}} {
		_, ok, err := c.s.Take(t.Context(), "app", w, one)
		if err != nil {
			t.Fatal(err)
		}
		if ok != c.want {
			t.Fatalf("take %d admitted = %v; want %v (the limit of 3 is the regions' sum)", i, ok, c.want)
		}
	}
	for _, s := range []counters.Store{us, eu} {
		c, err := s.Read(t.Context(), "app", w)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Value("", counters.Requests); got != 3 {
			t.Fatalf("Read = %d requests; want 3, the sum of both regions' items", got)
		}
	}
	own, _ := shared.Read(t.Context(), counters.RegionItem("app", "eu-west-1"), w)
	if got := own.Value("", counters.Requests); got != 2 {
		t.Fatalf("eu-west-1's own item holds %d; want 2", got)
	}
}

// TestRegionalHistory: usage kept per region keeps the History contract.
func TestRegionalHistory(t *testing.T) {
	counterstest.RunHistory(t, func(*testing.T) counters.History {
		return counters.HistoryInRegions(counters.NewMemoryHistory(), "eu-west-1", []string{"us-east-1", "eu-west-1"})
	})
}
