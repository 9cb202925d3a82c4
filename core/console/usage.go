package console

import (
	"sort"
	"time"
)

// span is the usage a key's page shows: days or months, from and to (YYYY-MM-DD).
type span struct {
	group, from, to string
	labels          []string
}

// maxDays is the longest span the admin API answers (from..to at most 400 days).
const maxDays = 400

// usageSpan reads the page's group, from and to: by default the last 30 days by day, or
// the last 12 months by month.
func usageSpan(group, from, to string, now time.Time) (span, string) {
	if group == "" {
		group = "day"
	}
	if group != "day" && group != "month" {
		return span{}, "Group usage by day or month."
	}
	today := now.UTC().Truncate(24 * time.Hour)
	end := today
	if to != "" {
		t, err := time.Parse(time.DateOnly, to)
		if err != nil {
			return span{}, "The end date must be a date (YYYY-MM-DD)."
		}
		end = t
	}
	var start time.Time
	switch {
	case from != "":
		t, err := time.Parse(time.DateOnly, from)
		if err != nil {
			return span{}, "The start date must be a date (YYYY-MM-DD)."
		}
		start = t
	case group == "month":
		start = time.Date(end.Year(), end.Month()-11, 1, 0, 0, 0, 0, time.UTC)
	default:
		start = end.AddDate(0, 0, -29)
	}
	if end.Before(start) {
		return span{}, "The start date is after the end date."
	}
	if end.Sub(start) > (maxDays-1)*24*time.Hour {
		return span{}, "Usage is shown for at most 400 days at a time."
	}
	s := span{group: group, from: start.Format(time.DateOnly), to: end.Format(time.DateOnly)}
	if group == "day" {
		for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
			s.labels = append(s.labels, d.Format(time.DateOnly))
		}
	} else {
		for m := time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(end); m = m.AddDate(0, 1, 0) {
			s.labels = append(s.labels, m.Format("2006-01"))
		}
	}
	return s, ""
}

// Group, From and To are for the page's form.
func (s span) Group() string { return s.group }
func (s span) From() string  { return s.from }
func (s span) To() string    { return s.to }

// usageCharts draws the usage rows as three charts over the span's periods, a series per
// model (most spent first, then by name, so the colours stay put between reloads).
func usageCharts(u *usageAnswer, s span) (spend, tokens, requests Chart) {
	index := map[string]int{}
	for i, l := range s.labels {
		index[l] = i
	}
	type sums struct{ cost, tokens, requests []float64 }
	byModel := map[string]*sums{}
	total := map[string]float64{}
	for _, r := range u.Rows {
		p := r.Period
		if s.group == "month" && len(p) >= 7 {
			p = p[:7]
		}
		i, ok := index[p]
		if !ok {
			continue
		}
		m := byModel[r.Model]
		if m == nil {
			n := len(s.labels)
			m = &sums{make([]float64, n), make([]float64, n), make([]float64, n)}
			byModel[r.Model] = m
		}
		m.cost[i] += r.CostUSD
		m.tokens[i] += float64(r.InputTokens + r.OutputTokens)
		m.requests[i] += float64(r.Requests)
		total[r.Model] += r.CostUSD + float64(r.InputTokens+r.OutputTokens)*1e-9
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Slice(models, func(i, j int) bool {
		if total[models[i]] != total[models[j]] {
			return total[models[i]] > total[models[j]]
		}
		return models[i] < models[j]
	})
	per := "day"
	if s.group == "month" {
		per = "month"
	}
	spend = Chart{Title: "Spend per " + per, Labels: s.labels, Format: FormatUSD}
	tokens = Chart{Title: "Tokens per " + per, Labels: s.labels}
	requests = Chart{Title: "Requests per " + per, Labels: s.labels}
	for _, m := range models {
		spend.Series = append(spend.Series, Series{Name: m, Values: byModel[m].cost})
		tokens.Series = append(tokens.Series, Series{Name: m, Values: byModel[m].tokens})
		requests.Series = append(requests.Series, Series{Name: m, Values: byModel[m].requests})
	}
	return spend, tokens, requests
}
