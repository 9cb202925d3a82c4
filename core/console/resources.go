package console

import (
	"encoding/json"
	"time"
)

// The admin API's resources as the console reads them (ADMIN-API: the field names are the
// contract). Times stay strings: a config key has none, and the page shows them as sent.

type rateJSON struct {
	RequestsPerMinute int64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64 `json:"tokens_per_minute,omitempty"`
}

type budgetJSON struct {
	USDPerDay   float64 `json:"usd_per_day,omitempty"`
	USDPerMonth float64 `json:"usd_per_month,omitempty"`
}

type modelLimitsJSON struct {
	Rate   *rateJSON   `json:"rate,omitempty"`
	Budget *budgetJSON `json:"budget,omitempty"`
}

type keyJSON struct {
	ID             string                      `json:"id"`
	Name           string                      `json:"name"`
	Team           string                      `json:"team"`
	Owner          string                      `json:"owner"`
	Description    string                      `json:"description"`
	Role           string                      `json:"role"`
	Models         []string                    `json:"models"`
	Residency      string                      `json:"residency"`
	RequestProfile string                      `json:"request_profile"`
	Rate           *rateJSON                   `json:"rate"`
	Budget         *budgetJSON                 `json:"budget"`
	PerModel       map[string]*modelLimitsJSON `json:"per_model"`
	ExpiresAt      string                      `json:"expires_at"`
	Disabled       bool                        `json:"disabled"`
	Deleted        bool                        `json:"deleted"`
	CreatedAt      string                      `json:"created_at"`
	CreatedBy      string                      `json:"created_by"`
	UpdatedAt      string                      `json:"updated_at"`
	UpdatedBy      string                      `json:"updated_by"`
	Version        int64                       `json:"version"`
	Source         string                      `json:"source"`
	// Secret is the key's secret, in the answers of create and rotate only.
	Secret string `json:"key"`
}

// Status is the key's state in a word, for the list and the detail page.
func (k *keyJSON) Status(now time.Time) string {
	switch {
	case k.Deleted:
		return "deleted"
	case k.Disabled:
		return "disabled"
	}
	if t, err := time.Parse(time.RFC3339, k.ExpiresAt); err == nil && !now.Before(t) {
		return "expired"
	}
	return "active"
}

// Stored reports whether the key was issued at runtime (and so can be changed here);
// config keys are listed read-only.
func (k *keyJSON) Stored() bool { return k.Source != "config" }

type keyPage struct {
	Data []*keyJSON `json:"data"`
	Next string     `json:"next"`
}

type usageCounts struct {
	Requests     int64   `json:"requests"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

type usageRow struct {
	Period string `json:"period"`
	Model  string `json:"model"`
	usageCounts
}

type usageAnswer struct {
	Key    string          `json:"key"`
	From   string          `json:"from"`
	To     string          `json:"to"`
	Group  string          `json:"group"`
	Rows   []usageRow      `json:"rows"`
	Totals usageCounts     `json:"totals"`
	Limits json.RawMessage `json:"limits"`
}

type routeJSON struct {
	ID            string            `json:"id"`
	Model         string            `json:"model"`
	Connection    string            `json:"connection"`
	UpstreamModel string            `json:"upstream_model"`
	Status        string            `json:"status"`
	Until         string            `json:"until"`
	Reason        string            `json:"reason"`
	Source        string            `json:"source"`
	Remediations  []json.RawMessage `json:"remediations"`
}

type auditJSON struct {
	ID      string          `json:"id"`
	Time    string          `json:"time"`
	Actor   string          `json:"actor"`
	Role    string          `json:"role"`
	Action  string          `json:"action"`
	Target  string          `json:"target"`
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	Request string          `json:"request"`
}

type me struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"`
	Team string `json:"team"`
}
