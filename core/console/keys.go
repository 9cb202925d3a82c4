package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/fngate/fngate/core/admin"
)

// keysPage lists keys: a search by name (q), a team, tombstones on demand, a page at a time.
func (c *Console) keysPage(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	in := r.URL.Query()
	q := url.Values{"limit": {"50"}}
	for _, f := range []string{"q", "team", "after"} {
		if v := strings.TrimSpace(in.Get(f)); v != "" {
			q.Set(f, limit(v, 200))
		}
	}
	if in.Get("deleted") == "true" {
		q.Set("deleted", "true")
	}
	var page keyPage
	if err := c.call(r.Context(), p, http.MethodGet, "/admin/v1/keys", q, nil, &page); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	next := ""
	if page.Next != "" {
		n := url.Values{}
		for k, v := range q {
			if k != "limit" {
				n[k] = v
			}
		}
		n.Set("after", page.Next)
		next = Prefix + "/keys?" + n.Encode()
	}
	c.render(w, r, s, http.StatusOK, "keys", map[string]any{
		"Keys": page.Data, "Next": next, "Q": q.Get("q"), "Team": q.Get("team"), "Deleted": q.Get("deleted") == "true",
		"Done": doneMessage(in.Get("done")),
	})
}

// createKey makes a key and shows its secret, once: the answer is the page itself (no
// redirect, no cache), so the secret is in no address, history or log.
func (c *Console) createKey(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	body, bad := keyBody(r.PostForm, nil, true)
	if bad != "" {
		c.fail(w, r, s, http.StatusBadRequest, bad)
		return
	}
	var k keyJSON
	if err := c.call(r.Context(), p, http.MethodPost, "/admin/v1/keys", nil, body, &k); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	c.render(w, r, s, http.StatusCreated, "secret", map[string]any{"Key": &k, "Made": "created"})
}

// keyPage shows one key, its limits (with a form to change them) and its usage as charts.
func (c *Console) keyPage(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	id := r.PathValue("id")
	var k keyJSON
	if err := c.call(r.Context(), p, http.MethodGet, "/admin/v1/keys/"+url.PathEscape(id), nil, nil, &k); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	in := r.URL.Query()
	span, bad := usageSpan(in.Get("group"), in.Get("from"), in.Get("to"), c.now())
	if bad != "" {
		c.fail(w, r, s, http.StatusBadRequest, bad)
		return
	}
	var u usageAnswer
	q := url.Values{"key": {k.ID}, "from": {span.from}, "to": {span.to}, "group": {span.group}}
	if err := c.call(r.Context(), p, http.MethodGet, "/admin/v1/usage", q, nil, &u); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	spend, tokens, requests := usageCharts(&u, span)
	perModel := ""
	if len(k.PerModel) > 0 {
		b, _ := json.MarshalIndent(k.PerModel, "", "  ")
		perModel = string(b)
	}
	c.render(w, r, s, http.StatusOK, "key", map[string]any{
		"Title": "Key " + k.Name, "Key": &k, "Status": k.Status(c.now()), "Usage": &u, "Span": span,
		"Spend": spend.SVG(), "Tokens": tokens.SVG(), "Requests": requests.SVG(), "PerModel": perModel,
		"Limits": prettyJSON(u.Limits), "Done": doneMessage(in.Get("done")),
	})
}

// keyOp is one change of a key from its page: edit (its limits and details), disable,
// enable, rotate (the new secret shown once, as at creation) or delete.
func (c *Console) keyOp(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	id, op := r.PathValue("id"), r.PathValue("op")
	path := "/admin/v1/keys/" + url.PathEscape(id)
	ctx := r.Context()
	var k keyJSON
	var err error
	switch op {
	case "disable", "enable":
		err = c.call(ctx, p, http.MethodPost, path+"/"+op, nil, map[string]any{}, &k)
	case "rotate":
		if err = c.call(ctx, p, http.MethodPost, path+"/rotate", nil, map[string]any{}, &k); err == nil {
			c.render(w, r, s, http.StatusOK, "secret", map[string]any{"Key": &k, "Made": "rotated"})
			return
		}
	case "delete":
		if err = c.call(ctx, p, http.MethodDelete, path, nil, nil, &k); err == nil {
			http.Redirect(w, r, Prefix+"/keys?done=deleted", http.StatusSeeOther)
			return
		}
	case "edit":
		var cur keyJSON
		if err = c.call(ctx, p, http.MethodGet, path, nil, nil, &cur); err != nil {
			break
		}
		body, bad := keyBody(r.PostForm, &cur, false)
		if bad != "" {
			c.fail(w, r, s, http.StatusBadRequest, bad)
			return
		}
		err = c.call(ctx, p, http.MethodPatch, path, nil, body, &k)
	default:
		c.fail(w, r, s, http.StatusNotFound, "There is no such change of a key.")
		return
	}
	if err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"/keys/"+url.PathEscape(id)+"?done="+op, http.StatusSeeOther)
}

// doneMessage is what a page says after a change: from a fixed list, so no address can
// make a page say what it likes.
func doneMessage(op string) string {
	return map[string]string{
		"edit": "Saved.", "disable": "Key disabled: it stops working within 5 seconds.", "enable": "Key enabled.",
		"deleted": "Key deleted: it stops working within 5 seconds.", "cool": "Route cooled.", "restore": "Route restored.",
	}[op]
}

// keyBody turns a key form into the admin API's JSON. At creation every field given is
// sent; an edit sends only what differs from cur (the key as read), with the version the
// form was drawn from, so a change made meanwhile by someone else is a 409, not undone.
func keyBody(f url.Values, cur *keyJSON, create bool) (map[string]any, string) {
	body := map[string]any{}
	text := func(name string, max int) (string, string) {
		v := strings.TrimSpace(f.Get(name))
		if len(v) > max {
			return "", name + " is longer than " + strconv.Itoa(max) + " characters."
		}
		return v, ""
	}
	strs := map[string]*string{}
	if cur != nil {
		strs = map[string]*string{"team": &cur.Team, "owner": &cur.Owner, "description": &cur.Description}
	}
	fields := []string{"team", "owner", "description"}
	if create {
		fields = append(fields, "name", "role")
	}
	for _, name := range fields {
		if !f.Has(name) {
			continue
		}
		v, bad := text(name, 1000)
		if bad != "" {
			return nil, bad
		}
		if create {
			if v != "" {
				body[name] = v
			}
		} else if old := strs[name]; old != nil && *old != v {
			body[name] = v
		}
	}
	if f.Has("models") {
		models := strings.FieldsFunc(f.Get("models"), func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' })
		if len(models) > 100 {
			return nil, "A key names at most 100 model globs."
		}
		if create && len(models) > 0 || !create && !reflect.DeepEqual(nonNil(models), nonNil(cur.Models)) {
			body["models"] = nonNil(models)
		}
	}
	rate, bad := rateOf(f)
	if bad != "" {
		return nil, bad
	}
	if create && rate != nil || !create && f.Has("rpm") && !reflect.DeepEqual(zeroRate(rate), zeroRate(cur.Rate)) {
		body["rate"] = rate // nil (blank): key_defaults apply again
	}
	budget, bad := budgetOf(f)
	if bad != "" {
		return nil, bad
	}
	if create && budget != nil || !create && f.Has("usd_day") && !reflect.DeepEqual(zeroBudget(budget), zeroBudget(cur.Budget)) {
		body["budget"] = budget
	}
	if f.Has("per_model") {
		pm := map[string]*modelLimitsJSON{}
		if v := strings.TrimSpace(f.Get("per_model")); v != "" {
			d := json.NewDecoder(strings.NewReader(v))
			d.DisallowUnknownFields()
			if err := d.Decode(&pm); err != nil {
				return nil, `Per-model limits must be JSON: {"<model glob>": {"rate": {"requests_per_minute": 60}, "budget": {"usd_per_day": 5}}}.`
			}
		}
		var old map[string]*modelLimitsJSON
		if cur != nil {
			old = cur.PerModel
		}
		switch {
		case create && len(pm) > 0:
			body["per_model"] = pm
		case !create && !reflect.DeepEqual(pm, nonNilMap(old)):
			if len(pm) == 0 {
				body["per_model"] = nil
			} else {
				body["per_model"] = pm
			}
		}
	}
	if f.Has("expires_at") {
		v := strings.TrimSpace(f.Get("expires_at"))
		var exp string
		if v != "" {
			t, err := time.Parse(time.DateOnly, v)
			if err != nil {
				return nil, "The expiry date must be a date (YYYY-MM-DD)."
			}
			exp = t.UTC().Format(time.RFC3339)
		}
		switch {
		case create && exp != "":
			body["expires_at"] = exp
		case !create && exp != cur.ExpiresAt && !(exp == "" && cur.ExpiresAt == ""):
			if exp == "" {
				body["expires_at"] = nil
			} else {
				body["expires_at"] = exp
			}
		}
	}
	if !create {
		if len(body) == 0 {
			return nil, "Nothing was changed."
		}
		v, err := strconv.ParseInt(f.Get("version"), 10, 64)
		if err != nil || v < 1 {
			return nil, "The form has no key version: reload the page."
		}
		body["version"] = v
	}
	return body, ""
}

func rateOf(f url.Values) (*rateJSON, string) {
	rpm, bad := whole(f, "rpm", "Requests per minute")
	if bad != "" {
		return nil, bad
	}
	tpm, bad := whole(f, "tpm", "Tokens per minute")
	if bad != "" {
		return nil, bad
	}
	if rpm == 0 && tpm == 0 {
		return nil, ""
	}
	return &rateJSON{RequestsPerMinute: rpm, TokensPerMinute: tpm}, ""
}

func budgetOf(f url.Values) (*budgetJSON, string) {
	day, bad := dollars(f, "usd_day", "USD per day")
	if bad != "" {
		return nil, bad
	}
	month, bad := dollars(f, "usd_month", "USD per month")
	if bad != "" {
		return nil, bad
	}
	if day == 0 && month == 0 {
		return nil, ""
	}
	return &budgetJSON{USDPerDay: day, USDPerMonth: month}, ""
}

func whole(f url.Values, name, label string) (int64, string) {
	v := strings.TrimSpace(f.Get(name))
	if v == "" {
		return 0, ""
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1e12 {
		return 0, label + " must be a whole number, 0 or more (blank: no limit)."
	}
	return n, ""
}

func dollars(f url.Values, name, label string) (float64, string) {
	v := strings.TrimSpace(f.Get(name))
	if v == "" {
		return 0, ""
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || n > 1e9 || n != n {
		return 0, label + " must be an amount, 0 or more (blank: no limit)."
	}
	return n, ""
}

func zeroRate(r *rateJSON) *rateJSON {
	if r == nil {
		return &rateJSON{}
	}
	return r
}

func zeroBudget(b *budgetJSON) *budgetJSON {
	if b == nil {
		return &budgetJSON{}
	}
	return b
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]*modelLimitsJSON) map[string]*modelLimitsJSON {
	if m == nil {
		return map[string]*modelLimitsJSON{}
	}
	return m
}

func prettyJSON(raw json.RawMessage) string { return funcs["json"].(func(json.RawMessage) string)(raw) }
