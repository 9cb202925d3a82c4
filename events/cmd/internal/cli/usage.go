package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
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

const usageUsage = "usage [-key ID] [-from YYYY-MM-DD] [-to YYYY-MM-DD] [-group day|month]"

// usage shows the usage history: one key's requests, tokens and spend per day or month and
// model, beside its limits and what remains; or, without -key, every key's totals.
func (o *op) usage(ctx context.Context, args []string) error {
	fs := o.flags("usage")
	key := fs.String("key", "", "the key's id (key_..., or a config key's name); without it, every key's totals")
	from := fs.String("from", "", "the first UTC day, YYYY-MM-DD (default: the API's)")
	to := fs.String("to", "", "the last UTC day, YYYY-MM-DD (default: today)")
	group := fs.String("group", "", "rows per day or per month (default: the API's, day)")
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
	query := url.Values{}
	set(query, "key", *key)
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
	}
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	rows := make([][]string, 0, len(all.Data))
	for _, k := range all.Data {
		rows = append(rows, append([]string{k.Key, dash(k.Name), dash(k.Team)}, k.Totals.cells()...))
	}
	return table(o.env.Stdout, "KEY\tNAME\tTEAM\tREQUESTS\tINPUT TOKENS\tOUTPUT TOKENS\tCOST", rows)
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
		Totals usageCounts                `json:"totals"`
		Limits map[string]json.RawMessage `json:"limits"`
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
	names := make([]string, 0, len(u.Limits))
	for n, raw := range u.Limits {
		if compact(raw) != "-" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(o.env.Stdout, "%s: %s\n", n, flat(u.Limits[n]))
	}
	return nil
}

// flat is a JSON object as k=v pairs in key order (nested objects as k.sub=v), for the
// limits, whose fields the API may add to.
func flat(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	var parts []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			b, _ := json.Marshal(v)
			parts = append(parts, prefix+"="+strings.Trim(string(b), `"`))
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, m[k])
		}
	}
	walk("", v)
	return strings.Join(parts, " ")
}

func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 4, 64) }
