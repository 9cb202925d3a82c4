package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

const auditUsage = "audit [-target ID] [-since TIME|DURATION] [-until TIME|DURATION] [-after CURSOR] [-limit N]"

// audit pages the audit log, newest first: who changed what, when.
func (o *op) audit(ctx context.Context, args []string) error {
	fs := o.flags("audit")
	target := fs.String("target", "", "only the entries about this key id or route id")
	since := fs.String("since", "", "only entries at or after: an RFC 3339 time, or a duration ago (24h)")
	until := fs.String("until", "", "only entries before: an RFC 3339 time, or a duration ago")
	after := fs.String("after", "", "the cursor a previous page printed (next)")
	limit := fs.Int("limit", 0, "page size, 1 to 200 (default: the API's, 50)")
	if _, err := o.parse(fs, args, 0, auditUsage); err != nil {
		return err
	}
	if *limit < 0 || *limit > 200 {
		fmt.Fprintln(o.env.Stderr, "fngate audit: -limit is 1 to 200")
		return errUsage
	}
	query := url.Values{}
	set(query, "target", *target)
	set(query, "after", *after)
	now := o.env.now()
	for _, b := range []struct{ name, v string }{{"since", *since}, {"until", *until}} {
		if b.v == "" {
			continue
		}
		t, err := pointInTime(b.v, now)
		if err != nil {
			fmt.Fprintf(o.env.Stderr, "fngate audit: -%s: %v\nusage: fngate %s\n", b.name, err, auditUsage)
			return errUsage
		}
		query.Set(b.name, t)
	}
	if *limit > 0 {
		query.Set("limit", strconv.Itoa(*limit))
	}
	return o.do(ctx, http.MethodGet, "audit", query, nil, func(data []byte) error {
		var page struct {
			Data []struct {
				ID     string    `json:"id"`
				Time   time.Time `json:"time"`
				Actor  string    `json:"actor"`
				Role   string    `json:"role"`
				Action string    `json:"action"`
				Target string    `json:"target"`
			} `json:"data"`
			Next string `json:"next"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return err
		}
		rows := make([][]string, 0, len(page.Data))
		for _, e := range page.Data {
			rows = append(rows, []string{when(e.Time), e.Actor, dash(e.Role), e.Action, e.Target, e.ID})
		}
		if err := table(o.env.Stdout, "TIME\tACTOR\tROLE\tACTION\tTARGET\tID", rows); err != nil {
			return err
		}
		if page.Next != "" {
			fmt.Fprintf(o.env.Stderr, "more: fngate audit -after %s\n", page.Next)
		}
		return nil
	})
}

// pointInTime reads an RFC 3339 time, or a duration before now.
func pointInTime(s string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Format(time.RFC3339), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return "", fmt.Errorf("%q: want an RFC 3339 time (2026-12-01T00:00:00Z) or a duration ago (24h)", s)
	}
	return now.Add(-d).UTC().Format(time.RFC3339), nil
}
