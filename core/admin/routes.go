package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/routestate"
)

// Route sources: who set a route's current status.
const (
	sourceManual      = routestate.SourceManual
	sourceRemediation = "remediation"
	sourceIncident    = "incident"
)

// Route statuses as the API names them.
const (
	statusActive   = "active"
	statusCooled   = "cooled"
	statusDisabled = "disabled"
)

// Bounds of cool and restore.
const (
	defaultCool = 15 * time.Minute
	minCool     = time.Minute
	maxCool     = 7 * 24 * time.Hour
	maxReason   = 500
	// maxSnapshots is how many of the store's newest snapshots /routes reads, and
	// maxRemediations how many it shows per route.
	maxSnapshots    = 500
	maxRemediations = 10
	maxRouteID      = 512
	maxConflicts    = 8
)

// routeObject is one route with its state.
type routeObject struct {
	ID            string                `json:"id"`
	Model         string                `json:"model"`
	Models        []string              `json:"models"`
	Connection    string                `json:"connection"`
	UpstreamModel string                `json:"upstream_model"`
	Residency     string                `json:"residency"`
	Status        string                `json:"status"`
	Until         *time.Time            `json:"until"`
	Reason        string                `json:"reason"`
	Source        string                `json:"source"`
	Incident      string                `json:"incident,omitempty"`
	IncidentLink  string                `json:"incident_link,omitempty"`
	ChatOnly      bool                  `json:"chat_only"`
	UpdatedAt     *time.Time            `json:"updated_at"`
	Version       int64                 `json:"version"`
	InConfig      bool                  `json:"in_config"`
	Remediations  []remediationObject   `json:"remediations"`
	state         routestate.State      // as read
	snapshots     []routestate.Snapshot // newest first
}

// remediationObject is one recorded change of the route: remediation's, an incident's or an
// operator's, with the state before and after.
type remediationObject struct {
	ActionID string      `json:"action_id"`
	Action   string      `json:"action"`
	At       time.Time   `json:"at"`
	EventID  string      `json:"event_id,omitempty"`
	Why      string      `json:"why"`
	Before   stateObject `json:"before"`
	After    stateObject `json:"after"`
}

type stateObject struct {
	Status string     `json:"status"`
	Until  *time.Time `json:"until"`
	Reason string     `json:"reason"`
	Source string     `json:"source"`
}

func (h *Handler) stateJSON(s routestate.State) stateObject {
	o := stateObject{Status: statusOf(s, h.now()), Reason: s.Reason, Source: sourceOf(s)}
	if o.Status != statusActive || s.Source == sourceManual {
		o.Until = utc(s.Until)
	}
	return o
}

func statusOf(s routestate.State, now time.Time) string {
	switch s.Effective(now) {
	case routestate.Cooling:
		return statusCooled
	case routestate.Disabled:
		return statusDisabled
	}
	return statusActive
}

// sourceOf is who set the route's status: "" for a route with no record.
func sourceOf(s routestate.State) string {
	switch {
	case s.Version == 0 && s.Source == "":
		return ""
	case s.Source == routestate.SourceManual:
		return sourceManual
	case s.Incident != "":
		return sourceIncident
	}
	return sourceRemediation
}

// configRoutes is every route of the config by id, in model order.
func (h *Handler) configRoutes() (map[string]*routeObject, []string) {
	byID := map[string]*routeObject{}
	var ids []string
	models := make([]string, 0, len(h.cfg.Models))
	for name := range h.cfg.Models {
		models = append(models, name)
	}
	sort.Strings(models)
	for _, name := range models {
		for _, rc := range h.cfg.Models[name].Routes {
			id := rc.ID()
			if o := byID[id]; o != nil {
				o.Models = append(o.Models, name)
				continue
			}
			byID[id] = &routeObject{ID: id, Model: name, Models: []string{name}, Connection: rc.Connection,
				UpstreamModel: rc.Model, Residency: rc.Residency, InConfig: true}
			ids = append(ids, id)
		}
	}
	return byID, ids
}

func (h *Handler) listRoutes(w http.ResponseWriter, r *http.Request, p *Principal) {
	if _, e := query(r); e != nil {
		h.fail(w, r, e)
		return
	}
	byID, ids := h.configRoutes()
	if h.routes != nil {
		ctx, cancel := ctxStore(r)
		states, err := h.routes.List(ctx)
		cancel()
		if err != nil {
			h.storeFailed(w, r, "route_state", err)
			return
		}
		ctx, cancel = ctxStore(r)
		snaps, err := h.routes.Snapshots(ctx, maxSnapshots)
		cancel()
		if err != nil {
			h.storeFailed(w, r, "route_state", err)
			return
		}
		for _, st := range states {
			o := byID[st.Route]
			if o == nil {
				// A record of a route the config no longer has: shown, so it can be restored.
				o = &routeObject{ID: st.Route, Models: []string{}}
				byID[st.Route] = o
				ids = append(ids, st.Route)
			}
			o.state = st
		}
		for _, s := range snaps {
			if o := byID[s.Route]; o != nil && len(o.snapshots) < maxRemediations {
				o.snapshots = append(o.snapshots, s)
			}
		}
	}
	data := make([]*routeObject, 0, len(ids))
	for _, id := range ids {
		data = append(data, h.routeJSON(byID[id]))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// routeJSON fills o's state fields from what was read.
func (h *Handler) routeJSON(o *routeObject) *routeObject {
	st := o.state
	if st.Route == "" {
		st = routestate.State{Route: o.ID, Status: routestate.Active}
	}
	so := h.stateJSON(st)
	o.Status, o.Until, o.Reason, o.Source = so.Status, so.Until, so.Reason, so.Source
	o.Incident, o.IncidentLink, o.ChatOnly, o.Version, o.UpdatedAt = st.Incident, st.IncidentLink, st.ChatOnly, st.Version, utc(st.UpdatedAt)
	o.Remediations = []remediationObject{}
	for _, s := range o.snapshots {
		o.Remediations = append(o.Remediations, remediationObject{ActionID: s.ActionID, Action: s.Action, At: s.At.UTC(), EventID: s.EventID,
			Why: s.Why, Before: h.stateJSON(s.Before), After: h.stateJSON(s.After)})
	}
	return o
}

// coolBody and restoreBody are the bodies of cool and restore.
type coolBody struct {
	For    string `json:"for"`
	Reason string `json:"reason"`
}

type restoreBody struct {
	// For is how long self-repair leaves the restored route alone (default 15m).
	For    string `json:"for"`
	Reason string `json:"reason"`
}

// Actions a manual change records in the route's snapshot and the audit.
const (
	actionManualCool    = "manual_cool"
	actionManualRestore = "manual_restore"
)

func (h *Handler) coolRoute(w http.ResponseWriter, r *http.Request, p *Principal) {
	var b coolBody
	h.setRoute(w, r, p, &b, &b.For, &b.Reason, "route.cool", actionManualCool)
}

func (h *Handler) restoreRoute(w http.ResponseWriter, r *http.Request, p *Principal) {
	var b restoreBody
	h.setRoute(w, r, p, &b, &b.For, &b.Reason, "route.restore", actionManualRestore)
}

// setRoute cools or restores a route by hand: marked manual, so remediation leaves it alone
// for the time given; a snapshot in the route-state store (so fngate-remediate rollback
// can undo it) and an entry in the audit log.
func (h *Handler) setRoute(w http.ResponseWriter, r *http.Request, p *Principal, body any, forP, reasonP *string, auditAction, action string) {
	if e := readBody(w, r, body, true); e != nil {
		h.fail(w, r, e)
		return
	}
	id := r.PathValue("id")
	d, e := coolFor(*forP)
	switch {
	case e != nil:
		h.fail(w, r, e)
		return
	case id == "" || len(id) > maxRouteID || !plainText(id):
		h.fail(w, r, badRequest("id", "invalid_route_id", "a route id is connection/upstream-model (URL-escape the /), as GET "+Prefix+"routes lists"))
		return
	case len(*reasonP) > maxReason || !plainText(*reasonP):
		h.fail(w, r, badRequest("reason", "invalid_reason", fmt.Sprintf("reason is at most %d characters of plain text", maxReason)))
		return
	case h.routes == nil:
		h.fail(w, r, unavailable("no_route_state", "no route-state store is configured, so routes cannot be cooled or restored here"))
		return
	}
	if _, known := h.configRoutesHas(id); !known {
		ctx, cancel := ctxStore(r)
		cur, err := h.routes.Get(ctx, id)
		cancel()
		if err != nil {
			h.storeFailed(w, r, "route_state", err)
			return
		}
		if cur.Version == 0 {
			h.fail(w, r, notFound("route_not_found", "no route "+clip(id, 128)+" in the config or the route-state store"))
			return
		}
	}
	reason := *reasonP
	if reason == "" {
		reason = "manual"
	}
	now := h.now().UTC()
	var before, after routestate.State
	for attempt := 0; ; attempt++ {
		ctx, cancel := ctxStore(r)
		cur, err := h.routes.Get(ctx, id)
		cancel()
		if err != nil {
			h.storeFailed(w, r, "route_state", err)
			return
		}
		next := routestate.State{Route: id, Until: now.Add(d), Source: routestate.SourceManual, ChatOnly: cur.ChatOnly,
			EventID: "admin:" + requestID(r), Since: now, UpdatedAt: now, Version: cur.Version}
		if action == actionManualCool {
			next.Status, next.Reason = routestate.Cooling, reason
		} else {
			next.Status = routestate.Active
		}
		next.ActionID = routestate.NewActionID(now, next.EventID, id, action, fmt.Sprint(cur.Version))
		snap := &routestate.Snapshot{ActionID: next.ActionID, Route: id, Action: action, EventID: next.EventID,
			Why: fmt.Sprintf("%s by %s for %s: %s", action, actor(p), d, reason), At: now, Before: cur}
		ctx, cancel = ctxStore(r)
		stored, err := h.routes.Put(ctx, next, snap)
		cancel()
		if errors.Is(err, routestate.ErrConflict) && attempt < maxConflicts {
			continue
		}
		if err != nil {
			h.storeFailed(w, r, "route_state", err)
			return
		}
		before, after = cur, stored
		break
	}
	b, _ := json.Marshal(h.stateJSON(before))
	a, _ := json.Marshal(h.stateJSON(after))
	entry := &keystore.Entry{ID: keystore.NewEntryID(), Time: now, Actor: actor(p), Role: p.Role, Action: auditAction, Target: id,
		Before: b, After: a, Request: requestID(r)}
	if h.keys != nil {
		ctx, cancel := ctxStore(r)
		err := h.keys.Record(ctx, entry)
		cancel()
		if err != nil {
			// The route has changed; say so rather than let a retry change it twice.
			h.storeFailed(w, r, "audit", fmt.Errorf("route %s changed (%s), its audit entry not written: %w", id, action, err))
			return
		}
	}
	h.changed(r, entry)
	byID, _ := h.configRoutes()
	o := byID[id]
	if o == nil {
		o = &routeObject{ID: id, Models: []string{}}
	}
	o.state = after
	writeJSON(w, http.StatusOK, h.routeJSON(o))
}

func (h *Handler) configRoutesHas(id string) (*routeObject, bool) {
	byID, _ := h.configRoutes()
	o, ok := byID[id]
	return o, ok
}

// coolFor reads a duration ("15m"): minCool to maxCool, defaultCool when empty.
func coolFor(s string) (time.Duration, *apiError) {
	if s == "" {
		return defaultCool, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < minCool || d > maxCool {
		return 0, badRequest("for", "invalid_duration", fmt.Sprintf("for is a duration from %s to %s (15m, 2h), got %s", minCool, maxCool, strconvQuote(clip(s, 32))))
	}
	return d, nil
}
