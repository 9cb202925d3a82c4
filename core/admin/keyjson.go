package admin

import (
	"encoding/json"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// Where a listed key lives.
const (
	sourceStore  = "store"
	sourceConfig = "config"
)

// keyObject is a key as the API shows it: what it may do and who owns it, never its hash;
// its secret (Key) only in the answer that made it.
type keyObject struct {
	ID             string                      `json:"id"`
	Name           string                      `json:"name"`
	Team           string                      `json:"team"`
	Owner          string                      `json:"owner"`
	Description    string                      `json:"description"`
	Role           string                      `json:"role"`
	Models         []string                    `json:"models"`
	Residency      string                      `json:"residency"`
	RequestProfile string                      `json:"request_profile"`
	Rate           *jsonRate                   `json:"rate"`
	Budget         *jsonBudget                 `json:"budget"`
	PerModel       map[string]*jsonModelLimits `json:"per_model"`
	// Guardrails are added to the models' own; null: key_defaults' apply.
	Guardrails []jsonGuardrailUse `json:"guardrails"`
	ExpiresAt  *time.Time         `json:"expires_at"`
	Disabled   bool               `json:"disabled"`
	Deleted    bool               `json:"deleted"`
	CreatedAt  *time.Time         `json:"created_at"`
	CreatedBy  string             `json:"created_by"`
	UpdatedAt  *time.Time         `json:"updated_at"`
	UpdatedBy  string             `json:"updated_by"`
	Version    int64              `json:"version"`
	Source     string             `json:"source"`
	Key        string             `json:"key,omitempty"`
}

// jsonRate, jsonBudget and jsonModelLimits are config.Rate, config.Budget and
// config.ModelLimits with the YAML field names in JSON.
type jsonRate struct {
	RequestsPerMinute int64 `json:"requests_per_minute"`
	TokensPerMinute   int64 `json:"tokens_per_minute"`
}

type jsonBudget struct {
	USDPerDay   float64 `json:"usd_per_day"`
	USDPerMonth float64 `json:"usd_per_month"`
}

type jsonModelLimits struct {
	Rate   *jsonRate   `json:"rate,omitempty"`
	Budget *jsonBudget `json:"budget,omitempty"`
}

// jsonGuardrailUse is config.GuardrailUse: a configured guardrail attached to the key.
type jsonGuardrailUse struct {
	Name string `json:"name"`
	On   string `json:"on,omitempty"`
	Mode string `json:"mode,omitempty"`
}

// guardrailsJSON keeps nil apart from empty: a key with none of its own takes key_defaults',
// one with an empty list adds nothing to its models'.
func guardrailsJSON(us []config.GuardrailUse) []jsonGuardrailUse {
	if us == nil {
		return nil
	}
	out := make([]jsonGuardrailUse, len(us))
	for i, u := range us {
		out[i] = jsonGuardrailUse(u)
	}
	return out
}

func guardrailsConfig(us []jsonGuardrailUse) []config.GuardrailUse {
	if us == nil {
		return nil
	}
	out := make([]config.GuardrailUse, len(us))
	for i, u := range us {
		out[i] = config.GuardrailUse(u)
	}
	return out
}

func rateJSON(r *config.Rate) *jsonRate {
	if r == nil {
		return nil
	}
	return &jsonRate{r.RequestsPerMinute, r.TokensPerMinute}
}

func budgetJSON(b *config.Budget) *jsonBudget {
	if b == nil {
		return nil
	}
	return &jsonBudget{b.USDPerDay, b.USDPerMonth}
}

func perModelJSON(m map[string]*config.ModelLimits) map[string]*jsonModelLimits {
	if m == nil {
		return nil
	}
	out := make(map[string]*jsonModelLimits, len(m))
	for g, l := range m {
		if l == nil {
			out[g] = &jsonModelLimits{}
			continue
		}
		out[g] = &jsonModelLimits{Rate: rateJSON(l.Rate), Budget: budgetJSON(l.Budget)}
	}
	return out
}

func (r *jsonRate) config() *config.Rate {
	if r == nil {
		return nil
	}
	return &config.Rate{RequestsPerMinute: r.RequestsPerMinute, TokensPerMinute: r.TokensPerMinute}
}

func (b *jsonBudget) config() *config.Budget {
	if b == nil {
		return nil
	}
	return &config.Budget{USDPerDay: b.USDPerDay, USDPerMonth: b.USDPerMonth}
}

func perModelConfig(m map[string]*jsonModelLimits) map[string]*config.ModelLimits {
	if m == nil {
		return nil
	}
	out := make(map[string]*config.ModelLimits, len(m))
	for g, l := range m {
		if l == nil {
			out[g] = &config.ModelLimits{}
			continue
		}
		out[g] = &config.ModelLimits{Rate: l.Rate.config(), Budget: l.Budget.config()}
	}
	return out
}

func utc(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// storedKeyJSON is a stored key's object.
func storedKeyJSON(k *keystore.Key) *keyObject {
	o := &keyObject{
		ID: k.ID, Name: k.Name, Team: k.Team, Owner: k.Owner, Description: k.Description, Role: k.Role,
		Models: nonNil(k.Models), Residency: k.Residency, RequestProfile: k.RequestProfile,
		Rate: rateJSON(k.Rate), Budget: budgetJSON(k.Budget), PerModel: perModelJSON(k.PerModel),
		Guardrails: guardrailsJSON(k.Guardrails),
		Disabled:   k.Disabled, Deleted: k.Deleted, CreatedAt: utc(k.Created), CreatedBy: k.CreatedBy,
		UpdatedAt: utc(k.Updated), UpdatedBy: k.UpdatedBy, Version: k.Version, Source: sourceStore,
	}
	if k.ExpiresAt != nil {
		o.ExpiresAt = utc(*k.ExpiresAt)
	}
	return o
}

// configKeyJSON is a config key's object: read-only, its id its name.
func configKeyJSON(k *config.Key) *keyObject {
	return &keyObject{
		ID: k.Name, Name: k.Name, Models: nonNil(k.Models), Residency: k.Residency, RequestProfile: k.RequestProfile,
		Rate: rateJSON(k.Rate), Budget: budgetJSON(k.Budget), PerModel: perModelJSON(k.PerModel),
		Guardrails: guardrailsJSON(k.Guardrails), Source: sourceConfig,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// auditJSON is a key as an audit entry keeps it: its object, without a secret.
func auditJSON(k *keystore.Key) json.RawMessage {
	if k == nil {
		return nil
	}
	b, _ := json.Marshal(storedKeyJSON(k))
	return b
}
