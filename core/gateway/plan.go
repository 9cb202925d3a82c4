package gateway

import (
	"cmp"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/routestate"
)

// plan returns the routes to attempt, in order: the model's policy order, minus routes whose
// provider refuses the request, minus routes the overlay has cooled or disabled, limited to
// the first candidate's residency and to max_attempts.
//
// When the overlay has cooled every route that could serve, the cooled ones are tried anyway
// (soonest-to-recover first): self-repair may steer traffic but never takes a model offline.
func (g *Gateway) plan(m *model, req *llm.Request, rc *requestCtx) ([]*route, *llm.Error) {
	return g.planBy(m, rc, req.Session, req.Op == llm.OpCompletion, func(rt *route) *llm.Error { return rt.provider.Check(req, rt.target) })
}

// planBy is plan for any request: check asks a route whether it can serve it (once per
// route), session keeps a client session on one route under the weighted policy, and
// completion says the request is a legacy completion, which routes marked chat-only refuse.
func (g *Gateway) planBy(m *model, rc *requestCtx, session string, completion bool, check func(rt *route) *llm.Error) ([]*route, *llm.Error) {
	order := m.routes
	if m.cfg.Routing.Policy == config.PolicyWeighted && len(order) > 1 {
		order = weightedOrder(order, session)
	}
	now := g.now()
	pin := ""
	if rc.key != nil {
		pin = rc.key.Residency
	}
	var eligible, cooled []*route
	var cooledUntil []int64
	var refusals []*llm.Error
	disabled := 0
	for _, rt := range order {
		if pin != "" && rt.residency != pin {
			rc.skipped = append(rc.skipped, rt.id+": residency "+rt.residency+" is not the key's "+pin)
			continue
		}
		if oe := check(rt); oe != nil {
			refusals = append(refusals, oe)
			rc.skipped = append(rc.skipped, rt.id+": "+oe.Message)
			continue
		}
		if g.state != nil {
			if st, ok := g.state.Lookup(rt.id); ok {
				switch st.Effective(now) {
				case routestate.Disabled:
					disabled++
					rc.skipped = append(rc.skipped, rt.id+": disabled ("+st.Reason+")")
					continue
				case routestate.Cooling:
					cooled = append(cooled, rt)
					cooledUntil = append(cooledUntil, st.Until.UnixNano())
					rc.skipped = append(rc.skipped, rt.id+": cooling ("+st.Reason+")")
					continue
				}
				if st.ChatOnly {
					if completion {
						rc.skipped = append(rc.skipped, rt.id+": chat only")
						refusals = append(refusals, llm.UnsupportedEndpoint(rc.model, rt.provider.Name()))
						continue
					}
				}
			}
		}
		eligible = append(eligible, rt)
	}
	if len(eligible) == 0 && len(cooled) > 0 {
		idx := make([]int, len(cooled))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(cooledUntil[a], cooledUntil[b]) })
		for _, i := range idx {
			eligible = append(eligible, cooled[i])
		}
	}
	if len(eligible) == 0 {
		return nil, noRoute(rc, pin, refusals, disabled)
	}
	first := eligible[0].residency
	out := eligible[:0:0]
	for _, rt := range eligible {
		if rt.residency == first {
			out = append(out, rt)
		}
		if len(out) == m.cfg.Routing.MaxAttempts {
			break
		}
	}
	return out, nil
}

func noRoute(rc *requestCtx, pin string, refusals []*llm.Error, disabled int) *llm.Error {
	if len(refusals) > 0 {
		all501 := true
		for _, r := range refusals {
			all501 = all501 && r.Status == http.StatusNotImplemented
		}
		if all501 || len(refusals) == 1 {
			return refusals[0]
		}
		var msgs []string
		for _, r := range refusals {
			if r.Status != http.StatusNotImplemented && !slices.Contains(msgs, r.Message) {
				msgs = append(msgs, r.Message)
			}
		}
		first := refusals[0]
		for _, r := range refusals {
			if r.Status != http.StatusNotImplemented {
				first = r
				break
			}
		}
		return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Param: first.Param, Code: first.Code,
			Message: "no route of " + rc.model + " can serve this request: " + strings.Join(msgs, "; ")}
	}
	if disabled > 0 {
		return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "routes_disabled",
			Message: "every route of " + rc.model + " is disabled by route state; an operator must re-enable one"}
	}
	return &llm.Error{Status: http.StatusForbidden, Type: llm.TypePermission, Code: "residency_not_available",
		Message: "no route of " + rc.model + " has the residency " + pin + " this key is pinned to"}
}

// weightedOrder draws routes without replacement, each draw proportional to weight. A client
// session (Claude Code's x-claude-code-session-id) draws the same order every time, so its
// requests stay on one route and that route's prompt cache stays warm.
func weightedOrder(routes []*route, session string) []*route {
	rest := slices.Clone(routes)
	out := make([]*route, 0, len(routes))
	draw := rand.IntN
	if session != "" {
		h := fnv.New64a()
		h.Write([]byte(session))
		r := rand.New(rand.NewPCG(h.Sum64(), 0x6e67617465))
		draw = r.IntN
	}
	for len(rest) > 0 {
		total := 0
		for _, rt := range rest {
			total += rt.weight
		}
		n := draw(total)
		i := 0
		for ; i < len(rest)-1; i++ {
			n -= rest[i].weight
			if n < 0 {
				break
			}
		}
		out = append(out, rest[i])
		rest = slices.Delete(rest, i, i+1)
	}
	return out
}
