package admin

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// checkGrant refuses a team-admin a key beyond its own: another team, any role, a model
// outside its globs, another residency, a rate or budget above its own, or without one of its
// own guardrails (compared as each is enforced: the key's effective limits, key_defaults
// filling what it leaves unset). Other principals are not bounded.
func (h *Handler) checkGrant(p *Principal, k *keystore.Key) *apiError {
	if p.Role != keystore.RoleTeamAdmin {
		return nil
	}
	own := p.Key
	if own == nil {
		own = &config.Key{}
	}
	switch {
	case k.Team != p.Team:
		return forbidden("other_team", "a team-admin manages its own team's keys ("+p.Team+") only")
	case k.Role != "":
		return forbidden("role_not_grantable", "a team-admin grants no role (admin, viewer or team-admin)")
	case own.Residency != "" && k.Residency != own.Residency:
		return forbidden("exceeds_own_residency", "a team-admin pinned to residency "+own.Residency+" grants keys pinned to it too")
	}
	if len(own.Models) > 0 {
		if len(k.Models) == 0 {
			return forbidden("exceeds_own_models", "an empty models list allows every model; list models within the team-admin's own: "+strings.Join(own.Models, ", "))
		}
		for _, g := range k.Models {
			if !within(g, own.Models) {
				return forbidden("exceeds_own_models", fmt.Sprintf("model %q is outside the team-admin's own models (%s)", g, strings.Join(own.Models, ", ")))
			}
		}
	}
	mine, theirs := own.KeyLimits, h.cfg.KeyLimitsOf(&k.Key)
	// A key's guardrails replace key_defaults', so a team-admin could otherwise issue keys
	// checked less than its own.
	for _, u := range h.cfg.KeyLimitsOf(own).Guardrails {
		if !slices.Contains(theirs.Guardrails, u) {
			return forbidden("exceeds_own_guardrails", fmt.Sprintf("a team-admin's keys carry its own guardrails; add {name: %s, on: %s, mode: %s}", u.Name, u.On, u.Mode))
		}
	}
	if e := rateWithin("rate", mine.Rate, theirs.Rate); e != nil {
		return e
	}
	if e := budgetWithin("budget", mine.Budget, theirs.Budget); e != nil {
		return e
	}
	for _, g := range mine.Globs() {
		m := mine.PerModel[g]
		if m == nil {
			continue
		}
		t := theirs.PerModel[g]
		if t == nil {
			t = &config.ModelLimits{}
		}
		if e := rateWithin("per_model."+g+".rate", m.Rate, t.Rate); e != nil {
			return e
		}
		if e := budgetWithin("per_model."+g+".budget", m.Budget, t.Budget); e != nil {
			return e
		}
	}
	return nil
}

// within reports whether every model glob g matches is one a glob of own matches: g is
// one of them, a plain name one matches, or a narrowing of one ending in * (prefix* grants
// prefix<more>*, as long as <more> crosses no / and holds no class or escape).
func within(g string, own []string) bool {
	for _, o := range own {
		switch {
		case g == o:
			return true
		case !strings.ContainsAny(g, `*?[\`):
			if ok, _ := path.Match(o, g); ok {
				return true
			}
		case strings.HasSuffix(o, "*") && !strings.ContainsAny(o[:len(o)-1], `*?[\`):
			rest, ok := strings.CutPrefix(g, o[:len(o)-1])
			if ok && !strings.ContainsAny(rest, `/[\`) {
				return true
			}
		}
	}
	return false
}

// rateWithin refuses a rate above own's: for each limit own sets, theirs must set one no
// higher (zero is no limit).
func rateWithin(field string, own, theirs *config.Rate) *apiError {
	if own == nil {
		return nil
	}
	var t config.Rate
	if theirs != nil {
		t = *theirs
	}
	for _, c := range []struct {
		name     string
		mine, up int64
	}{{"requests_per_minute", own.RequestsPerMinute, t.RequestsPerMinute}, {"tokens_per_minute", own.TokensPerMinute, t.TokensPerMinute}} {
		if c.mine > 0 && (c.up == 0 || c.up > c.mine) {
			return exceeds(field+"."+c.name, fmt.Sprint(c.mine))
		}
	}
	return nil
}

func budgetWithin(field string, own, theirs *config.Budget) *apiError {
	if own == nil {
		return nil
	}
	var t config.Budget
	if theirs != nil {
		t = *theirs
	}
	for _, c := range []struct {
		name     string
		mine, up float64
	}{{"usd_per_day", own.USDPerDay, t.USDPerDay}, {"usd_per_month", own.USDPerMonth, t.USDPerMonth}} {
		if c.mine > 0 && (c.up == 0 || c.up > c.mine) {
			return exceeds(field+"."+c.name, fmt.Sprint(c.mine))
		}
	}
	return nil
}

func exceeds(field, mine string) *apiError {
	e := forbidden("exceeds_own_limits", field+" must be set, and at most the team-admin's own ("+mine+")")
	e.param = field
	return e
}
