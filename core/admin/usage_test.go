package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
)

func usageFixture(t *testing.T, mod ...func(*admin.Options)) (*fixture, *keystore.Key) {
	f := newFixture(t, "", mod...)
	k := f.addKey(&keystore.Key{Key: config.Key{Name: "svc", KeyLimits: config.KeyLimits{
		Rate: &config.Rate{RequestsPerMinute: 60}, Budget: &config.Budget{USDPerDay: 1, USDPerMonth: 10},
		PerModel: map[string]*config.ModelLimits{"team/*": {Budget: &config.Budget{USDPerDay: 0.5}}}}}, Team: "t"}, "sk-fngate-usage")
	ctx := context.Background()
	add := func(day string, model string, u counters.Usage) {
		at, _ := time.Parse(time.DateOnly, day)
		if err := f.history.AddUsage(ctx, k.ID, at.Add(time.Hour), model, u); err != nil {
			t.Fatal(err)
		}
	}
	add("2026-11-30", "team/chat", counters.Usage{Requests: 4, InputTokens: 40, OutputTokens: 4, CostNanoUSD: 1e9})
	add("2026-12-01", "team/chat", counters.Usage{Requests: 2, InputTokens: 20, OutputTokens: 2, CostNanoUSD: 5e8})
	add("2026-12-02", "team/chat", counters.Usage{Requests: 1, InputTokens: 10, OutputTokens: 1, CostNanoUSD: 25e7})
	add("2026-12-02", "other/chat", counters.Usage{Requests: 3, InputTokens: 30, OutputTokens: 3})
	return f, k
}

func TestUsageOfOneKey(t *testing.T) {
	f, k := usageFixture(t)
	code, u, _ := f.do(http.MethodGet, "/admin/v1/usage?key="+k.ID+"&from=2026-11-01&to=2026-12-02", viewerSecret, nil)
	if code != http.StatusOK {
		t.Fatalf("%d %v", code, u)
	}
	rows := u["rows"].([]any)
	if len(rows) != 4 || rows[0].(map[string]any)["period"] != "2026-11-30" || rows[0].(map[string]any)["cost_usd"] != 1.0 {
		t.Fatalf("rows %v", rows)
	}
	if tot := u["totals"].(map[string]any); tot["requests"] != 10.0 || tot["cost_usd"] != 1.75 || tot["input_tokens"] != 100.0 {
		t.Fatalf("totals %v", tot)
	}
	lim := u["limits"].(map[string]any)
	b := lim["budget"].(map[string]any)
	if lim["from"] != "history" || b["usd_per_day"] != 1.0 || b["spent_usd"].(map[string]any)["day"] != 0.25 ||
		b["spent_usd"].(map[string]any)["month"] != 0.75 || b["remaining_usd"].(map[string]any)["day"] != 0.75 {
		t.Fatalf("budget %v", lim)
	}
	if r := lim["rate"].(map[string]any); r["requests_per_minute"] != 60.0 || r["used"] != nil {
		t.Fatalf("rate %v", r)
	}
	if pm := lim["per_model"].(map[string]any)["team/*"].(map[string]any)["budget"].(map[string]any); pm["remaining_usd"].(map[string]any)["day"] != 0.25 {
		t.Fatalf("per_model %v", pm)
	}

	_, m, _ := f.do(http.MethodGet, "/admin/v1/usage?key="+k.ID+"&from=2026-11-01&to=2026-12-02&group=month", viewerSecret, nil)
	if rows := m["rows"].([]any); len(rows) != 3 || rows[1].(map[string]any)["period"] != "2026-12" || rows[2].(map[string]any)["requests"] != 3.0 {
		t.Fatalf("by month %v", rows)
	}
}

// TestUsageLimitsFromCounters: with the live counters, what remains is what the gateway
// admits against.
func TestUsageLimitsFromCounters(t *testing.T) {
	store := counters.NewMemory()
	f, k := usageFixture(t, func(o *admin.Options) { o.Counters = store })
	w := counters.At(f.now)
	if err := store.Add(context.Background(), k.ID, w, []counters.Amount{
		{Counter: counters.Counter{Kind: counters.Requests}, N: 7}, {Counter: counters.Counter{Kind: counters.Tokens}, N: 700},
		{Counter: counters.Counter{Kind: counters.SpendDay}, N: 4e8}, {Counter: counters.Counter{Kind: counters.SpendMonth}, N: 9e9},
	}); err != nil {
		t.Fatal(err)
	}
	_, u, _ := f.do(http.MethodGet, "/admin/v1/usage?key="+k.ID, adminSecret, nil)
	lim := u["limits"].(map[string]any)
	b, r := lim["budget"].(map[string]any), lim["rate"].(map[string]any)
	if lim["from"] != "counters" || b["spent_usd"].(map[string]any)["day"] != 0.4 || b["remaining_usd"].(map[string]any)["month"] != 1.0 {
		t.Fatalf("budget %v", b)
	}
	if r["used"].(map[string]any)["requests"] != 7.0 || r["remaining"].(map[string]any)["requests"] != 53.0 || r["remaining"].(map[string]any)["tokens"] != nil {
		t.Fatalf("rate %v", r)
	}
}

func TestUsageSummary(t *testing.T) {
	f, k := usageFixture(t)
	code, u, _ := f.do(http.MethodGet, "/admin/v1/usage?from=2026-12-01&to=2026-12-02", viewerSecret, nil)
	if code != http.StatusOK {
		t.Fatalf("%d %v", code, u)
	}
	data := u["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["key"] != "app" || data[1].(map[string]any)["key"] != k.ID ||
		data[1].(map[string]any)["totals"].(map[string]any)["requests"] != 6.0 {
		t.Fatalf("summary %v", data)
	}
}
