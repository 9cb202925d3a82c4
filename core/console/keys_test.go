package console

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestKeyBody: a create form sends what was filled in; an edit sends only what differs from
// the key as read, with the form's version; blank limits go back to key_defaults (null);
// bad numbers and JSON are refused with a message naming the field.
func TestKeyBody(t *testing.T) {
	cur := &keyJSON{ID: "key_x", Name: "app", Team: "web", Owner: "ann", Models: []string{"mock/*"}, Version: 4,
		Rate: &rateJSON{RequestsPerMinute: 60}, ExpiresAt: "2027-01-01T00:00:00Z",
		PerModel: map[string]*modelLimitsJSON{"openai/*": {Budget: &budgetJSON{USDPerDay: 1}}}}
	same := url.Values{"team": {"web"}, "owner": {"ann"}, "description": {""}, "models": {"mock/*"}, "rpm": {"60"}, "tpm": {""},
		"usd_day": {""}, "usd_month": {""}, "per_model": {`{"openai/*": {"budget": {"usd_per_day": 1}}}`}, "expires_at": {"2027-01-01"}, "version": {"4"}}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, vs := range same {
			v[k] = vs
		}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		create bool
		want   string // the body as JSON, or the refusal's start
	}{
		{"create, the least", url.Values{"name": {"app"}, "team": {""}, "role": {""}, "models": {""}, "rpm": {""}}, true, `{"name":"app"}`},
		{"create, everything", url.Values{"name": {"app"}, "team": {"web"}, "role": {"team-admin"}, "models": {"a/*, b/*\nc"},
			"rpm": {"10"}, "usd_month": {"2.5"}, "per_model": {`{"a/*":{"rate":{"tokens_per_minute":5}}}`}, "expires_at": {"2027-02-03"}}, true,
			`{"budget":{"usd_per_month":2.5},"expires_at":"2027-02-03T00:00:00Z","models":["a/*","b/*","c"],"name":"app","per_model":{"a/*":{"rate":{"tokens_per_minute":5}}},"rate":{"requests_per_minute":10},"role":"team-admin","team":"web"}`},
		{"edit, nothing changed", same, false, "Nothing was changed."},
		{"edit, the owner", with("owner", "bob"), false, `{"owner":"bob","version":4}`},
		{"edit, a limit", with("tpm", "1000"), false, `{"rate":{"requests_per_minute":60,"tokens_per_minute":1000},"version":4}`},
		{"edit, limits cleared", with("rpm", "", "per_model", ""), false, `{"per_model":null,"rate":null,"version":4}`},
		{"edit, expiry cleared", with("expires_at", ""), false, `{"expires_at":null,"version":4}`},
		{"edit, all models", with("models", ""), false, `{"models":[],"version":4}`},
		{"edit, no version", with("owner", "bob", "version", ""), false, "The form has no key version"},
		{"a negative rate", with("rpm", "-1"), false, "Requests per minute must be"},
		{"a rate in words", with("rpm", "lots"), false, "Requests per minute must be"},
		{"a budget NaN", with("usd_day", "NaN"), false, "USD per day must be"},
		{"per-model not JSON", with("per_model", "{"), false, "Per-model limits must be JSON"},
		{"per-model unknown field", with("per_model", `{"a":{"rates":{}}}`), false, "Per-model limits must be JSON"},
		{"a bad date", with("expires_at", "tomorrow"), false, "The expiry date must be"},
		{"too many models", with("models", strings.Repeat("m,", 101)), false, "A key names at most 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c *keyJSON
			if !tc.create {
				c = cur
			}
			body, bad := keyBody(tc.form, c, tc.create)
			got := bad
			if bad == "" {
				b, err := json.Marshal(body)
				if err != nil {
					t.Fatal(err)
				}
				got = string(b)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
