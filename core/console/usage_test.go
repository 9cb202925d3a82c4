package console

import (
	"strings"
	"testing"
)

func TestUsageSpan(t *testing.T) {
	for _, tc := range []struct {
		group, from, to string
		labels          int
		first, last     string
		bad             string
	}{
		{"", "", "", 30, "2026-11-02", "2026-12-01", ""},
		{"month", "", "", 12, "2026-01", "2026-12", ""},
		{"day", "2026-11-30", "2026-12-01", 2, "2026-11-30", "2026-12-01", ""},
		{"month", "2025-11-15", "2026-01-01", 3, "2025-11", "2026-01", ""},
		{"day", "2025-10-28", "2026-12-01", 400, "2025-10-28", "2026-12-01", ""},
		{"day", "2025-10-27", "2026-12-01", 0, "", "", "at most 400 days"},
		{"day", "2026-12-02", "2026-12-01", 0, "", "", "after the end"},
		{"day", "yesterday", "", 0, "", "", "start date"},
		{"day", "", "12/01/2026", 0, "", "", "end date"},
		{"week", "", "", 0, "", "", "by day or month"},
	} {
		s, bad := usageSpan(tc.group, tc.from, tc.to, t0)
		if tc.bad != "" {
			if !strings.Contains(bad, tc.bad) {
				t.Errorf("%+v: refusal %q, want one saying %q", tc, bad, tc.bad)
			}
			continue
		}
		if bad != "" || len(s.labels) != tc.labels || s.labels[0] != tc.first || s.labels[len(s.labels)-1] != tc.last {
			t.Errorf("%+v: %q, labels %v", tc, bad, s.labels)
		}
	}
}

// TestUsageCharts: each row lands on its period (a month's rows whether the period is
// 2026-12 or 2026-12-01), tokens are input plus output, the model that spent most comes
// first, and a row outside the span is dropped rather than drawn somewhere else.
func TestUsageCharts(t *testing.T) {
	s, _ := usageSpan("month", "2026-10-01", "2026-12-01", t0)
	u := &usageAnswer{Rows: []usageRow{
		{Period: "2026-10", Model: "cheap", usageCounts: usageCounts{Requests: 1, InputTokens: 10, OutputTokens: 5, CostUSD: 0.01}},
		{Period: "2026-12-01", Model: "dear", usageCounts: usageCounts{Requests: 2, InputTokens: 1, OutputTokens: 1, CostUSD: 3}},
		{Period: "2026-12", Model: "cheap", usageCounts: usageCounts{Requests: 1, InputTokens: 1, OutputTokens: 1, CostUSD: 0.02}},
		{Period: "2027-01", Model: "cheap", usageCounts: usageCounts{Requests: 100, CostUSD: 100}},
	}}
	spend, tokens, requests := usageCharts(u, s)
	if len(spend.Series) != 2 || spend.Series[0].Name != "dear" {
		t.Fatalf("series %+v, want dear first", spend.Series)
	}
	if got := spend.Series[1].Values; got[0] != 0.01 || got[1] != 0 || got[2] != 0.02 {
		t.Errorf("cheap's spend %v", got)
	}
	if got := tokens.Series[1].Values[0]; got != 15 {
		t.Errorf("cheap's October tokens %v, want 15", got)
	}
	if got := requests.Series[0].Values[2]; got != 2 {
		t.Errorf("dear's December requests %v, want 2", got)
	}
}
