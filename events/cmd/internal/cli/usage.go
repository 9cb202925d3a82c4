package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// usageCounts are one row's or one total's counts, as the API sends them.
type usageCounts struct {
	Requests     int64   `json:"requests"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

func (u usageCounts) cells() []string {
	return []string{strconv.FormatInt(u.Requests, 10), strconv.FormatInt(u.InputTokens, 10), strconv.FormatInt(u.OutputTokens, 10), usd(u.CostUSD)}
}

const usageUsage = "usage [-key ID | -team T -after CURSOR -limit N] [-from YYYY-MM-DD] [-to YYYY-MM-DD] [-group day|month]"

// usage shows the usage history: one key's requests, tokens and spend per day or month and
// model, beside its limits and what remains; or, without -key, every key's totals.
func (o *op) usage(ctx context.Context, args []string) error {
	fs := o.flags("usage")
	key := fs.String("key", "", "the key's id (key_..., or a config key's name); without it, every key's totals")
	from := fs.String("from", "", "the first UTC day, YYYY-MM-DD (default: the API's)")
	to := fs.String("to", "", "the last UTC day, YYYY-MM-DD (default: today)")
	group := fs.String("group", "", "rows per day or per month (default: the API's, day)")
	team := fs.String("team", "", "without -key: only the keys of this team")
	after := fs.String("after", "", "without -key: the cursor a previous page printed (next)")
	limit := fs.Int("limit", 0, "without -key: keys per page, 1 to 200 (default: the API's, 50)")
	if _, err := o.parse(fs, args, 0, usageUsage); err != nil {
		return err
	}
	for _, d := range []struct{ flag, v string }{{"from", *from}, {"to", *to}} {
		if _, err := time.Parse(time.DateOnly, d.v); d.v != "" && err != nil {
			fmt.Fprintf(o.env.Stderr, "fngate usage: -%s %q: want a UTC day, YYYY-MM-DD\nusage: fngate %s\n", d.flag, d.v, usageUsage)
			return errUsage
		}
	}
	if *group != "" && *group != "day" && *group != "month" {
		fmt.Fprintf(o.env.Stderr, "fngate usage: -group is day or month\nusage: fngate %s\n", usageUsage)
		return errUsage
	}
	if *key != "" && (*team != "" || *after != "" || *limit != 0) {
		fmt.Fprintf(o.env.Stderr, "fngate usage: -team, -after and -limit page the keys' totals, without -key\nusage: fngate %s\n", usageUsage)
		return errUsage
	}
	if *limit < 0 || *limit > 200 {
		fmt.Fprintln(o.env.Stderr, "fngate usage: -limit is 1 to 200")
		return errUsage
	}
	query := url.Values{}
	set(query, "key", *key)
	set(query, "team", *team)
	set(query, "after", *after)
	if *limit > 0 {
		query.Set("limit", strconv.Itoa(*limit))
	}
	set(query, "from", *from)
	set(query, "to", *to)
	set(query, "group", *group)
	return o.do(ctx, http.MethodGet, "usage", query, nil, func(data []byte) error {
		if *key == "" {
			return o.usageAll(data)
		}
		return o.usageKey(data)
	})
}

func (o *op) usageAll(data []byte) error {
	var all struct {
		Data []struct {
			Key    string      `json:"key"`
			Name   string      `json:"name"`
			Team   string      `json:"team"`
			Totals usageCounts `json:"totals"`
		} `json:"data"`
		Next string `json:"next"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	rows := make([][]string, 0, len(all.Data))
	for _, k := range all.Data {
		rows = append(rows, append([]string{k.Key, dash(k.Name), dash(k.Team)}, k.Totals.cells()...))
	}
	if err := table(o.env.Stdout, "KEY\tNAME\tTEAM\tREQUESTS\tINPUT TOKENS\tOUTPUT TOKENS\tCOST", rows); err != nil {
		return err
	}
	if all.Next != "" {
		fmt.Fprintf(o.env.Stderr, "more: fngate usage -after %s\n", all.Next)
	}
	return nil
}

func (o *op) usageKey(data []byte) error {
	var u struct {
		Key   string `json:"key"`
		From  string `json:"from"`
		To    string `json:"to"`
		Group string `json:"group"`
		Rows  []struct {
			Period string `json:"period"`
			Model  string `json:"model"`
			usageCounts
		} `json:"rows"`
		Totals usageCounts `json:"totals"`
		Limits *limitsView `json:"limits"`
	}
	if err := json.Unmarshal(data, &u); err != nil {
		return err
	}
	fmt.Fprintf(o.env.Stdout, "key %s, %s to %s, per %s\n", u.Key, u.From, u.To, dash(u.Group))
	rows := make([][]string, 0, len(u.Rows)+1)
	for _, r := range u.Rows {
		rows = append(rows, append([]string{r.Period, r.Model}, r.usageCounts.cells()...))
	}
	rows = append(rows, append([]string{"total", ""}, u.Totals.cells()...))
	if err := table(o.env.Stdout, "PERIOD\tMODEL\tREQUESTS\tINPUT TOKENS\tOUTPUT TOKENS\tCOST", rows); err != nil {
		return err
	}
	if u.Limits == nil {
		return nil
	}
	fmt.Fprintf(o.env.Stdout, "\nlimits (spent from the %s):\n", dash(u.Limits.From))
	lrows := u.Limits.scoped.rows("(key)")
	globs := slices.Sorted(maps.Keys(u.Limits.PerModel))
	for _, g := range globs {
		if l := u.Limits.PerModel[g]; l != nil {
			lrows = append(lrows, l.rows(g)...)
		}
	}
	return table(o.env.Stdout, "SCOPE\tCOUNTER\tLIMIT\tUSED\tREMAINING\tRESETS", lrows)
}

// limitsView is the usage answer's limits: the key's budget and rate, and each per_model
// glob's, with what is spent or used and what remains (absent where there is no limit).
type limitsView struct {
	From string `json:"from"`
	scoped
	PerModel map[string]*scoped `json:"per_model"`
}

type scoped struct {
	Budget struct {
		USDPerDay    *float64                       `json:"usd_per_day"`
		USDPerMonth  *float64                       `json:"usd_per_month"`
		SpentUSD     struct{ Day, Month float64 }   `json:"spent_usd"`
		RemainingUSD struct{ Day, Month *float64 }  `json:"remaining_usd"`
		Resets       struct{ Day, Month time.Time } `json:"resets"`
	} `json:"budget"`
	Rate struct {
		RequestsPerMinute *int64                             `json:"requests_per_minute"`
		TokensPerMinute   *int64                             `json:"tokens_per_minute"`
		Used              *struct{ Requests, Tokens int64 }  `json:"used"`
		Remaining         *struct{ Requests, Tokens *int64 } `json:"remaining"`
		Resets            time.Time                          `json:"resets"`
	} `json:"rate"`
}

// rows are the counters that have a limit, as the table shows them.
func (l *scoped) rows(scope string) [][]string {
	var out [][]string
	b := &l.Budget
	for _, c := range []struct {
		name   string
		limit  *float64
		spent  float64
		left   *float64
		resets time.Time
	}{{"usd/day", b.USDPerDay, b.SpentUSD.Day, b.RemainingUSD.Day, b.Resets.Day}, {"usd/month", b.USDPerMonth, b.SpentUSD.Month, b.RemainingUSD.Month, b.Resets.Month}} {
		if c.limit != nil {
			out = append(out, []string{scope, c.name, usd(*c.limit), usd(c.spent), usdPtr(c.left), when(c.resets)})
		}
	}
	r := &l.Rate
	for _, c := range []struct {
		name  string
		limit *int64
		used  func() (int64, *int64)
	}{
		{"requests/min", r.RequestsPerMinute, func() (int64, *int64) { return r.Used.Requests, r.Remaining.Requests }},
		{"tokens/min", r.TokensPerMinute, func() (int64, *int64) { return r.Used.Tokens, r.Remaining.Tokens }},
	} {
		if c.limit == nil {
			continue
		}
		used, left := "-", "-"
		if r.Used != nil && r.Remaining != nil {
			u, l := c.used()
			used, left = strconv.FormatInt(u, 10), intPtr(l)
		}
		out = append(out, []string{scope, c.name, strconv.FormatInt(*c.limit, 10), used, left, when(r.Resets)})
	}
	return out
}

func usdPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return usd(*v)
}

func intPtr(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 4, 64) }
