package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// keyView is the part of the API's key object the tables show; -json prints the object as
// the API sent it.
type keyView struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Team           string          `json:"team"`
	Owner          string          `json:"owner"`
	Description    string          `json:"description"`
	Role           string          `json:"role"`
	Models         []string        `json:"models"`
	Residency      string          `json:"residency"`
	RequestProfile string          `json:"request_profile"`
	Rate           json.RawMessage `json:"rate"`
	Budget         json.RawMessage `json:"budget"`
	PerModel       json.RawMessage `json:"per_model"`
	Guardrails     json.RawMessage `json:"guardrails"`
	ExpiresAt      *time.Time      `json:"expires_at"`
	Disabled       bool            `json:"disabled"`
	Deleted        bool            `json:"deleted"`
	CreatedAt      time.Time       `json:"created_at"`
	CreatedBy      string          `json:"created_by"`
	UpdatedAt      time.Time       `json:"updated_at"`
	UpdatedBy      string          `json:"updated_by"`
	Version        int64           `json:"version"`
	Source         string          `json:"source"`
	Key            string          `json:"key"` // the secret: create and rotate only
}

// state is the key's one-word state, as of now.
func (k *keyView) state(now time.Time) string {
	switch {
	case k.Deleted:
		return "deleted"
	case k.Disabled:
		return "disabled"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	}
	return "active"
}

const keysUsage = "keys list | get | create | update | disable | enable | rotate | delete (fngate keys -h)"

func (o *op) keys(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(o.env.Stderr, "usage: fngate", keysUsage)
		return errUsage
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "list":
		return o.keysList(ctx, rest)
	case "get":
		return o.keyAction(ctx, rest, sub, http.MethodGet, "")
	case "create":
		return o.keyWrite(ctx, rest, true)
	case "update":
		return o.keyWrite(ctx, rest, false)
	case "disable", "enable", "rotate":
		return o.keyAction(ctx, rest, sub, http.MethodPost, "/"+sub)
	case "delete":
		return o.keyAction(ctx, rest, sub, http.MethodDelete, "")
	case "-h", "-help", "help":
		fmt.Fprint(o.env.Stderr, mainUsage)
		return errUsage
	default:
		fmt.Fprintf(o.env.Stderr, "fngate keys: unknown command %q\nusage: fngate %s\n", sub, keysUsage)
		return errUsage
	}
}

func (o *op) keysList(ctx context.Context, args []string) error {
	fs := o.flags("keys list")
	team := fs.String("team", "", "only the keys of this team")
	name := fs.String("name", "", "only the key of this name")
	q := fs.String("q", "", "only keys whose name, owner or description contain this")
	deleted := fs.Bool("deleted", false, "include revoked keys (tombstones)")
	limit := fs.Int("limit", 0, "page size, 1 to 200 (default: the API's, 50)")
	after := fs.String("after", "", "the cursor a previous page printed (next)")
	if _, err := o.parse(fs, args, 0, "keys list [-team T] [-name N] [-q TEXT] [-deleted] [-limit N] [-after CURSOR]"); err != nil {
		return err
	}
	if *limit < 0 || *limit > 200 {
		fmt.Fprintln(o.env.Stderr, "fngate keys list: -limit is 1 to 200")
		return errUsage
	}
	query := url.Values{}
	set(query, "team", *team)
	set(query, "name", *name)
	set(query, "q", *q)
	set(query, "after", *after)
	if *deleted {
		query.Set("deleted", "true")
	}
	if *limit > 0 {
		query.Set("limit", strconv.Itoa(*limit))
	}
	return o.do(ctx, http.MethodGet, "keys", query, nil, func(data []byte) error {
		var page struct {
			Data []keyView `json:"data"`
			Next string    `json:"next"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return err
		}
		now := o.env.now()
		rows := make([][]string, 0, len(page.Data))
		for _, k := range page.Data {
			rows = append(rows, []string{k.ID, k.Name, dash(k.Team), dash(k.Role), models(k.Models), k.state(now), dash(k.Source), when(k.UpdatedAt)})
		}
		if err := table(o.env.Stdout, "ID\tNAME\tTEAM\tROLE\tMODELS\tSTATE\tSOURCE\tUPDATED", rows); err != nil {
			return err
		}
		if page.Next != "" {
			fmt.Fprintf(o.env.Stderr, "more: fngate keys list -after %s\n", page.Next)
		}
		return nil
	})
}

// keyAction is a command on one key by id: get, disable, enable, rotate, delete.
func (o *op) keyAction(ctx context.Context, args []string, sub, method, suffix string) error {
	fs := o.flags("keys " + sub)
	pos, err := o.parse(fs, args, 1, "keys "+sub+" ID")
	if err != nil {
		return err
	}
	return o.do(ctx, method, "keys/"+url.PathEscape(pos[0])+suffix, nil, nil, o.showKey)
}

// keyFields are the flags of create and update, each the key field of the same name.
type keyFields struct {
	fs                                           *flag.FlagSet
	name, team, owner, description, role, models *string
	residency, requestProfile, perModel, expires *string
	guardrails                                   *string
	rpm, tpm                                     *int64
	usdDay, usdMonth                             *float64
	version                                      *int64
}

func (o *op) keyFlags(fs *flag.FlagSet, create bool) *keyFields {
	f := &keyFields{fs: fs}
	if create {
		f.name = fs.String("name", "", "the key's name (required; unique among live keys and config keys)")
	} else {
		f.version = fs.Int64("version", 0, "the version the change is based on (from get): refused with 409 if the key changed since")
	}
	f.team = fs.String("team", "", "the team the key belongs to")
	f.owner = fs.String("owner", "", "who the key is for (a person, a service)")
	f.description = fs.String("description", "", "what the key is for")
	f.role = fs.String("role", "", "an admin role the key carries: admin, viewer or team-admin (default none)")
	f.models = fs.String("models", "", "comma-separated model globs the key may use (empty: every model)")
	f.residency = fs.String("residency", "", "pin the key's requests to routes with this residency label")
	f.requestProfile = fs.String("request-profile", "", "the request profile for the key's requests (strict, extended, ...)")
	f.rpm = fs.Int64("rpm", 0, "rate: requests per minute (0: none)")
	f.tpm = fs.Int64("tpm", 0, "rate: tokens per minute (0: none)")
	f.usdDay = fs.Float64("usd-day", 0, "budget: USD per UTC day (0: none)")
	f.usdMonth = fs.Float64("usd-month", 0, "budget: USD per UTC month (0: none)")
	f.perModel = fs.String("per-model", "", `per-model limits as JSON: '{"claude-*":{"budget":{"usd_per_month":50}}}'`)
	f.guardrails = fs.String("guardrails", "", "guardrails added to the models' own, comma-separated name[:on[:mode]] (pii:input:mask,bedrock-standard); none: no more than the models'; empty: key_defaults'")
	f.expires = fs.String("expires", "", "when the key stops working: an RFC 3339 time, or a duration from now (720h, 30d); update: never clears it")
	return f
}

// body is the JSON the set flags ask for: only the fields named on the command line, so an
// update changes nothing else. base is the key as read (update with part of a rate or a
// budget), whose other half is kept.
func (f *keyFields) body(now time.Time, base *keyView) (map[string]any, error) {
	seen := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { seen[fl.Name] = true })
	b := map[string]any{}
	for flagName, field := range map[string]*string{"name": f.name, "team": f.team, "owner": f.owner, "description": f.description,
		"role": f.role, "residency": f.residency, "request-profile": f.requestProfile} {
		if seen[flagName] {
			b[strings.ReplaceAll(flagName, "-", "_")] = *field
		}
	}
	if seen["models"] {
		list := []string{}
		for _, m := range strings.Split(*f.models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				list = append(list, m)
			}
		}
		b["models"] = list
	}
	if rate := f.merged(seen, base, "rate", map[string]any{"rpm": *f.rpm, "tpm": *f.tpm},
		map[string]string{"rpm": "requests_per_minute", "tpm": "tokens_per_minute"}); rate != nil {
		b["rate"] = rate
	}
	if budget := f.merged(seen, base, "budget", map[string]any{"usd-day": *f.usdDay, "usd-month": *f.usdMonth},
		map[string]string{"usd-day": "usd_per_day", "usd-month": "usd_per_month"}); budget != nil {
		b["budget"] = budget
	}
	if seen["per-model"] {
		var pm map[string]any
		if err := json.Unmarshal([]byte(*f.perModel), &pm); err != nil {
			return nil, fmt.Errorf("-per-model: not a JSON object of globs to limits: %v", err)
		}
		b["per_model"] = pm
	}
	if seen["guardrails"] {
		g, err := guardrailUses(*f.guardrails)
		if err != nil {
			return nil, err
		}
		b["guardrails"] = g
	}
	if seen["expires"] {
		t, err := expiry(*f.expires, now, f.version != nil)
		if err != nil {
			return nil, err
		}
		b["expires_at"] = t
	}
	if f.version != nil && seen["version"] {
		b["version"] = *f.version
	}
	return b, nil
}

// merged is a rate or a budget from its flags, over the key's current one when only some of
// its flags are set (nil when none is).
func (f *keyFields) merged(seen map[string]bool, base *keyView, field string, values map[string]any, names map[string]string) map[string]any {
	var out map[string]any
	for fl, v := range values {
		if !seen[fl] {
			continue
		}
		if out == nil {
			out = map[string]any{}
			if base != nil {
				raw := base.Rate
				if field == "budget" {
					raw = base.Budget
				}
				_ = json.Unmarshal(raw, &out) // null or absent: nothing to keep
				if out == nil {
					out = map[string]any{}
				}
			}
		}
		out[names[fl]] = v
	}
	return out
}

// partial reports whether the flags set part of a rate or a budget only, which an update
// completes from the key as it is.
func (f *keyFields) partial() bool {
	seen := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { seen[fl.Name] = true })
	return seen["rpm"] != seen["tpm"] || seen["usd-day"] != seen["usd-month"]
}

// guardrailUses reads -guardrails: "" is null (key_defaults' apply), "none" an empty list,
// else name[:on[:mode]] uses, on and mode left to the API's defaults when not given.
func guardrailUses(s string) (any, error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, nil
	case "none":
		return []any{}, nil
	}
	var out []any
	for _, u := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(u), ":")
		if len(parts) > 3 || parts[0] == "" {
			return nil, fmt.Errorf("-guardrails %q: want comma-separated name[:on[:mode]] (pii:input:mask)", s)
		}
		use := map[string]any{"name": parts[0]}
		for i, field := range []string{"on", "mode"} {
			if i+1 < len(parts) && parts[i+1] != "" {
				use[field] = parts[i+1]
			}
		}
		out = append(out, use)
	}
	return out, nil
}

// expiry reads -expires: an RFC 3339 time, a duration (h, m, s, or d for days) from now, or
// (update) never.
func expiry(s string, now time.Time, update bool) (any, error) {
	if update && s == "never" {
		return nil, nil // JSON null: no expiry
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Format(time.RFC3339), nil
	}
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		n, nerr := strconv.Atoi(days)
		d, err = time.Duration(n)*24*time.Hour, nerr
	}
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("-expires %q: want an RFC 3339 time (2027-01-31T00:00:00Z) or a positive duration (720h, 30d)", s)
	}
	return now.Add(d).UTC().Format(time.RFC3339), nil
}

func (o *op) keyWrite(ctx context.Context, args []string, create bool) error {
	sub, usage := "update", "keys update [-version N] [-team T] [-owner O] [-description D] [-role R] [-models GLOB,...] [-residency R] [-request-profile P] [-rpm N] [-tpm N] [-usd-day X] [-usd-month X] [-per-model JSON] [-guardrails NAME[:ON[:MODE]],...|none] [-expires TIME|DURATION|never] ID"
	want := 1
	if create {
		sub, usage, want = "create", "keys create -name NAME [-team T] [-owner O] [-description D] [-role R] [-models GLOB,...] [-residency R] [-request-profile P] [-rpm N] [-tpm N] [-usd-day X] [-usd-month X] [-per-model JSON] [-guardrails NAME[:ON[:MODE]],...|none] [-expires TIME|DURATION]", 0
	}
	fs := o.flags("keys " + sub)
	f := o.keyFlags(fs, create)
	pos, err := o.parse(fs, args, want, usage)
	if err != nil {
		return err
	}
	if create && *f.name == "" {
		fmt.Fprintln(o.env.Stderr, "fngate keys create: -name is required\nusage: fngate", usage)
		return errUsage
	}
	c, done, err := o.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	var base *keyView
	if !create && f.partial() {
		// Half a rate or a budget: the other half is the key's, read now, and the update
		// names the version read so a change in between is refused rather than undone.
		data, err := c.call(ctx, http.MethodGet, "keys/"+url.PathEscape(pos[0]), nil, nil)
		if err != nil {
			return err
		}
		base = &keyView{}
		if err := json.Unmarshal(data, base); err != nil {
			return err
		}
		if *f.version == 0 {
			_ = fs.Set("version", strconv.FormatInt(base.Version, 10))
		}
	}
	now := o.env.now()
	body, err := f.body(now, base)
	if err != nil {
		fmt.Fprintln(o.env.Stderr, "fngate keys "+sub+":", err)
		return errUsage
	}
	method, path := http.MethodPost, "keys"
	if !create {
		if len(body) == 0 || len(body) == 1 && body["version"] != nil {
			fmt.Fprintln(o.env.Stderr, "fngate keys update: nothing to change: give at least one field's flag\nusage: fngate", usage)
			return errUsage
		}
		method, path = http.MethodPatch, "keys/"+url.PathEscape(pos[0])
	}
	data, err := c.call(ctx, method, path, nil, body)
	if err != nil {
		return err
	}
	return o.print(data, o.showKey)
}

// showKey prints one key object, field by field; a secret in it is printed once, last, with
// a warning on stderr.
func (o *op) showKey(data []byte) error {
	var k keyView
	if err := json.Unmarshal(data, &k); err != nil {
		return err
	}
	rows := [][]string{
		{"id", k.ID}, {"name", k.Name}, {"state", k.state(o.env.now())}, {"team", dash(k.Team)}, {"owner", dash(k.Owner)},
		{"description", dash(k.Description)}, {"role", dash(k.Role)}, {"models", models(k.Models)},
		{"residency", dash(k.Residency)}, {"request_profile", dash(k.RequestProfile)},
		{"rate", compact(k.Rate)}, {"budget", compact(k.Budget)}, {"per_model", compact(k.PerModel)},
		{"guardrails", guardrailsShown(k.Guardrails)},
		{"expires_at", whenPtr(k.ExpiresAt)}, {"created", when(k.CreatedAt) + " by " + dash(k.CreatedBy)},
		{"updated", when(k.UpdatedAt) + " by " + dash(k.UpdatedBy)}, {"version", strconv.FormatInt(k.Version, 10)},
	}
	if k.Source != "" {
		rows = append(rows, []string{"source", k.Source})
	}
	if k.Key != "" {
		rows = append(rows, []string{"key", k.Key})
	}
	if err := table(o.env.Stdout, "FIELD\tVALUE", rows); err != nil {
		return err
	}
	return nil
}

// guardrailsShown is a key's guardrails as name:on:mode, "-" when key_defaults' apply and
// "none" for an empty list.
func guardrailsShown(raw json.RawMessage) string {
	var us []struct{ Name, On, Mode string }
	if json.Unmarshal(raw, &us) != nil || us == nil {
		return "-"
	}
	if len(us) == 0 {
		return "none"
	}
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Name + ":" + u.On + ":" + u.Mode
	}
	return strings.Join(out, ",")
}

func models(m []string) string {
	if len(m) == 0 {
		return "*"
	}
	return strings.Join(m, ",")
}

// compact is a JSON value on one line, "-" when absent.
func compact(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "{}" {
		return "-"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return when(*t)
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}
