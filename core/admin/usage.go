package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
)

// Usage grouping.
const (
	groupDay   = "day"
	groupMonth = "month"
	// defaultDays is the range when from is not given: the last 30 days.
	defaultDays = 30
)

// usageRow is one period's use of one model.
type usageRow struct {
	Period string `json:"period"`
	Model  string `json:"model"`
	counts
}

// counts is what requests used, as the API shows it (dollars, not nano-dollars).
type counts struct {
	Requests     int64   `json:"requests"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

func countsOf(u counters.Usage) counts {
	return counts{u.Requests, u.InputTokens, u.OutputTokens, usd(u.CostNanoUSD)}
}

func usd(nano int64) float64 { return float64(nano) / 1e9 }

// usageRange is a request's from, to (both UTC days, included) and grouping.
type usageRange struct {
	from, to time.Time
	group    string
}

func (h *Handler) readRange(q url.Values) (usageRange, *apiError) {
	today := h.now().UTC().Truncate(24 * time.Hour)
	ur := usageRange{to: today, group: groupDay}
	day := func(name string, into *time.Time) *apiError {
		s := q.Get(name)
		if s == "" {
			return nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return badRequest(name, "invalid_date", name+" is a UTC day, YYYY-MM-DD, got "+strconvQuote(clip(s, 32)))
		}
		*into = t
		return nil
	}
	if e := day("to", &ur.to); e != nil {
		return ur, e
	}
	ur.from = ur.to.AddDate(0, 0, -(defaultDays - 1))
	if e := day("from", &ur.from); e != nil {
		return ur, e
	}
	switch g := q.Get("group"); g {
	case "", groupDay:
	case groupMonth:
		ur.group = groupMonth
	default:
		return ur, badRequest("group", "invalid_group", "group is day or month, got "+strconvQuote(clip(g, 32)))
	}
	switch n := int(ur.to.Sub(ur.from).Hours()/24) + 1; {
	case n < 1:
		return ur, badRequest("from", "invalid_range", "from must not be after to")
	case n > counters.HistoryDays:
		return ur, badRequest("from", "invalid_range", "from..to spans at most 400 days (the history kept)")
	}
	return ur, nil
}

// usageKey is the key a usage request is about: a stored key or a config key.
type usageKey struct {
	id, name, team, source string
	key                    *config.Key
}

func (h *Handler) usage(w http.ResponseWriter, r *http.Request, p *Principal) {
	q, e := query(r, "key", "from", "to", "group", "team", "after", "limit")
	if e != nil {
		h.fail(w, r, e)
		return
	}
	ur, e := h.readRange(q)
	if e != nil {
		h.fail(w, r, e)
		return
	}
	if h.history == nil {
		h.fail(w, r, unavailable("no_history", "no usage history is configured for this control plane"))
		return
	}
	if q.Get("key") == "" {
		h.usageAll(w, r, p, q, ur)
		return
	}
	for _, f := range []string{"team", "after", "limit"} {
		if q.Has(f) {
			h.fail(w, r, badRequest(f, "invalid_parameter", f+" pages the keys of a usage summary; with key= there is one key"))
			return
		}
	}
	k, e := h.findUsageKey(r, p, q.Get("key"))
	if e != nil {
		if e.status == http.StatusServiceUnavailable {
			h.storeFailed(w, r, "key", e)
			return
		}
		h.fail(w, r, e)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), historyTimeout)
	days, err := h.history.Usage(ctx, k.id, ur.from, ur.to)
	cancel()
	if err != nil {
		h.storeFailed(w, r, "history", err)
		return
	}
	rows, totals := group(days, ur.group)
	limits, err := h.limits(r, k)
	if err != nil {
		h.storeFailed(w, r, "counters", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"key": k.id, "name": k.name, "team": k.team, "from": ur.from.Format(time.DateOnly),
		"to": ur.to.Format(time.DateOnly), "group": ur.group, "rows": rows, "totals": totals, "limits": limits})
}

func (h *Handler) findUsageKey(r *http.Request, p *Principal, id string) (*usageKey, *apiError) {
	if !strings.HasPrefix(id, keystore.IDPrefix) {
		ck := h.cfgKeys[id]
		if ck == nil || p.Role == keystore.RoleTeamAdmin {
			return nil, notFound("key_not_found", "no key "+strconvQuote(clip(id, 64)))
		}
		return &usageKey{id: ck.Name, name: ck.Name, source: sourceConfig, key: ck}, nil
	}
	if !validKeyID.MatchString(id) {
		return nil, badRequest("key", "invalid_key_id", "a key id is key_ and 24 letters and digits (or a config key's name)")
	}
	if h.keys == nil {
		return nil, notFound("key_not_found", "no key "+id+" (no key_store is configured)")
	}
	ctx, cancel := ctxStore(r)
	sk, err := h.keys.Get(ctx, id)
	cancel()
	switch {
	case errors.Is(err, keystore.ErrNotFound), err == nil && p.Role == keystore.RoleTeamAdmin && sk.Team != p.Team:
		return nil, notFound("key_not_found", "no key "+id)
	case err != nil:
		return nil, unavailable("key_unavailable", err.Error())
	}
	return &usageKey{id: sk.ID, name: sk.Name, team: sk.Team, source: sourceStore, key: &sk.Key}, nil
}

// group sums days into rows per period and model, and the totals.
func group(days []counters.DayUsage, by string) ([]usageRow, counts) {
	type pm struct{ period, model string }
	sums := map[pm]counters.Usage{}
	var total counters.Usage
	for _, d := range days {
		period := d.Day
		if by == groupMonth {
			period = d.Day[:7]
		}
		u := sums[pm{period, d.Model}]
		u.Add(d.Usage)
		sums[pm{period, d.Model}] = u
		total.Add(d.Usage)
	}
	rows := make([]usageRow, 0, len(sums))
	for k, u := range sums {
		rows = append(rows, usageRow{Period: k.period, Model: k.model, counts: countsOf(u)})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Period != rows[j].Period {
			return rows[i].Period < rows[j].Period
		}
		return rows[i].Model < rows[j].Model
	})
	return rows, countsOf(total)
}

// limitsObject is a key's limits beside what it has used of them in the current windows.
type limitsObject struct {
	// From is where the current windows' use was read: counters (what the gateway admits
	// against, reservations of running requests included) or history (settled use only).
	From     string                   `json:"from"`
	Budget   budgetLimit              `json:"budget"`
	Rate     rateLimit                `json:"rate"`
	PerModel map[string]*scopedLimits `json:"per_model"`
}

type scopedLimits struct {
	Budget budgetLimit `json:"budget"`
	Rate   rateLimit   `json:"rate"`
}

// budgetLimit: the limits (null when none), spend this UTC day and month, what remains
// (null where there is no limit), and when each window resets.
type budgetLimit struct {
	USDPerDay    *float64  `json:"usd_per_day"`
	USDPerMonth  *float64  `json:"usd_per_month"`
	SpentUSD     window    `json:"spent_usd"`
	RemainingUSD windowOpt `json:"remaining_usd"`
	Resets       struct {
		Day   time.Time `json:"day"`
		Month time.Time `json:"month"`
	} `json:"resets"`
}

type window struct {
	Day   float64 `json:"day"`
	Month float64 `json:"month"`
}

type windowOpt struct {
	Day   *float64 `json:"day"`
	Month *float64 `json:"month"`
}

// rateLimit: the limits per minute (null when none) and, read from the counters, this
// minute's use and what remains (null without counters or without a limit).
type rateLimit struct {
	RequestsPerMinute *int64    `json:"requests_per_minute"`
	TokensPerMinute   *int64    `json:"tokens_per_minute"`
	Used              *rateUse  `json:"used"`
	Remaining         *rateLeft `json:"remaining"`
	Resets            time.Time `json:"resets"`
}

type rateUse struct {
	Requests int64 `json:"requests"`
	Tokens   int64 `json:"tokens"`
}

type rateLeft struct {
	Requests *int64 `json:"requests"`
	Tokens   *int64 `json:"tokens"`
}

func posF(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return &v
}

func posI(v int64) *int64 {
	if v <= 0 {
		return nil
	}
	return &v
}

func left(limit *float64, used float64) *float64 {
	if limit == nil {
		return nil
	}
	v := max(*limit-used, 0)
	return &v
}

func leftI(limit *int64, used int64) *int64 {
	if limit == nil {
		return nil
	}
	v := max(*limit-used, 0)
	return &v
}

// limits are k's effective limits (its own, key_defaults filling the rest: what the
// gateway holds it to) with the current windows' use: from the counters when the control
// plane has them (the very counts the gateway admits against), else the settled spend of
// the usage history.
func (h *Handler) limits(r *http.Request, k *usageKey) (*limitsObject, error) {
	kl := h.cfg.KeyLimitsOf(k.key)
	now := h.now()
	w := counters.At(now)
	out := &limitsObject{PerModel: map[string]*scopedLimits{}}
	var spent func(scope string) (day, month float64)
	var rate func(scope string) *rateUse
	if h.counters != nil {
		ctx, cancel := ctxStore(r)
		c, err := h.counters.Read(ctx, k.id, w)
		cancel()
		if err != nil {
			return nil, err
		}
		w = c.Windows
		out.From = "counters"
		spent = func(scope string) (float64, float64) {
			return usd(c.Value(scope, counters.SpendDay)), usd(c.Value(scope, counters.SpendMonth))
		}
		rate = func(scope string) *rateUse {
			return &rateUse{c.Value(scope, counters.Requests), c.Value(scope, counters.Tokens)}
		}
	} else {
		today := now.UTC()
		month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
		ctx, cancel := context.WithTimeout(r.Context(), historyTimeout)
		days, err := h.history.Usage(ctx, k.id, month, today)
		cancel()
		if err != nil {
			return nil, err
		}
		out.From = "history"
		spent = func(scope string) (day, mon float64) {
			for _, d := range days {
				if ok, _ := path.Match(scope, d.Model); scope != "" && !ok {
					continue
				}
				mon += usd(d.CostNanoUSD)
				if d.Day == counters.Day(today) {
					day += usd(d.CostNanoUSD)
				}
			}
			return day, mon
		}
		rate = func(string) *rateUse { return nil }
	}
	fill := func(scope string, b *config.Budget, rt *config.Rate) scopedLimits {
		var s scopedLimits
		if b != nil {
			s.Budget.USDPerDay, s.Budget.USDPerMonth = posF(b.USDPerDay), posF(b.USDPerMonth)
		}
		s.Budget.SpentUSD.Day, s.Budget.SpentUSD.Month = spent(scope)
		s.Budget.RemainingUSD = windowOpt{left(s.Budget.USDPerDay, s.Budget.SpentUSD.Day), left(s.Budget.USDPerMonth, s.Budget.SpentUSD.Month)}
		s.Budget.Resets.Day, s.Budget.Resets.Month = w.End(counters.SpendDay), w.End(counters.SpendMonth)
		if rt != nil {
			s.Rate.RequestsPerMinute, s.Rate.TokensPerMinute = posI(rt.RequestsPerMinute), posI(rt.TokensPerMinute)
		}
		s.Rate.Resets = w.End(counters.Requests)
		if u := rate(scope); u != nil {
			s.Rate.Used = u
			s.Rate.Remaining = &rateLeft{leftI(s.Rate.RequestsPerMinute, u.Requests), leftI(s.Rate.TokensPerMinute, u.Tokens)}
		}
		return s
	}
	own := fill("", kl.Budget, kl.Rate)
	out.Budget, out.Rate = own.Budget, own.Rate
	for _, g := range kl.Globs() {
		if m := kl.PerModel[g]; m != nil {
			s := fill(g, m.Budget, m.Rate)
			out.PerModel[g] = &s
		}
	}
	return out, nil
}

// summaryRow is one key's totals over the range.
type summaryRow struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	Team   string `json:"team"`
	Source string `json:"source"`
	Totals counts `json:"totals"`
}

// usageAll is every key's totals (a team-admin: its team's), a page of keys at a time.
func (h *Handler) usageAll(w http.ResponseWriter, r *http.Request, p *Principal, q url.Values, ur usageRange) {
	limit, e := pageLimit(q)
	if e != nil {
		h.fail(w, r, e)
		return
	}
	team, after := q.Get("team"), q.Get("after")
	switch {
	case after != "" && !validKeyID.MatchString(after):
		h.fail(w, r, badRequest("after", "invalid_cursor", "after is the next cursor of a previous page (a key id)"))
		return
	case p.Role == keystore.RoleTeamAdmin && team != "" && team != p.Team:
		h.fail(w, r, forbidden("other_team", "a team-admin sees its own team's usage ("+p.Team+") only"))
		return
	case p.Role == keystore.RoleTeamAdmin:
		team = p.Team
	}
	var keys []usageKey
	if after == "" && team == "" {
		for i := range h.cfg.Keys {
			ck := &h.cfg.Keys[i]
			keys = append(keys, usageKey{id: ck.Name, name: ck.Name, source: sourceConfig, key: ck})
		}
	}
	next := ""
	if h.keys != nil {
		var err error
		next, err = h.scanKeys(r, keystore.Query{Team: team, After: after}, limit, func(k *keystore.Key) bool {
			keys = append(keys, usageKey{id: k.ID, name: k.Name, team: k.Team, source: sourceStore, key: &k.Key})
			return true
		})
		if err != nil {
			h.storeFailed(w, r, "key", err)
			return
		}
	}
	data := make([]summaryRow, 0, len(keys))
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(r.Context(), historyTimeout)
		days, err := h.history.Usage(ctx, k.id, ur.from, ur.to)
		cancel()
		if err != nil {
			h.storeFailed(w, r, "history", err)
			return
		}
		_, totals := group(days, ur.group)
		data = append(data, summaryRow{Key: k.id, Name: k.name, Team: k.team, Source: k.source, Totals: totals})
	}
	writeJSON(w, http.StatusOK, map[string]any{"from": ur.from.Format(time.DateOnly), "to": ur.to.Format(time.DateOnly),
		"group": ur.group, "data": data, "next": next})
}
