package remediation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/fngate/fngate/core/routestate"
)

// ReasonProviderIncident is the reason on a route cooled because its provider announced an
// incident for its service and region; the route's state names the incident and its link.
const ReasonProviderIncident = "provider_incident"

// Correlation of a burst with the provider's own health news (the Correlation dimension of
// RemediationBursts).
const (
	// CorrelatedIncident: an open provider incident covers the route's service and region;
	// the provider is on it.
	CorrelatedIncident = "provider_incident"
	// CorrelatedNone: no open incident explains the burst; a configuration or quota problem
	// (a rotated key, a quota too low for the traffic) is the likelier cause, and that is the
	// deployment's own to fix. Routes on providers without a health feed land here too.
	CorrelatedNone = "none"
)

// IncidentDelivery is one piece of provider health news as a platform delivered it. ID is
// the platform's idempotency key, prefixed by its source (eb:, ps:).
type IncidentDelivery struct {
	ID       string
	Incident routestate.Incident
	// Sent is when the feed sent it; an opening older than MaxEventAge is stale. Zero means
	// now.
	Sent time.Time
}

// HandleIncident acts on provider health news: an open incident cools every route of the
// inventory on its service and region (reason provider_incident, with the incident id and
// link); its resolution re-enables the routes that this incident cooled and nothing else (a
// route an operator cleared, a burst cooled or another open incident still covers stays as
// it is). It records the incident either way, so later bursts can be correlated with it.
// Like Handle it claims the delivery once, dry-runs unless the mode is Apply, and snapshots
// and counts every change.
func (e *Engine) HandleIncident(ctx context.Context, d IncidentDelivery) ([]Outcome, error) {
	now := e.now()
	news := d.Incident
	base := Outcome{At: now, EventID: d.ID, Action: None, Mode: e.mode, Incident: news.ID, IncidentLink: news.Link}
	switch {
	case d.ID == "":
		return nil, fmt.Errorf("%w: a delivery without an id cannot be made idempotent", ErrInvalid)
	case news.ID == "" || news.Cloud == "":
		return nil, fmt.Errorf("%w: provider health news without an incident id or cloud", ErrInvalid)
	}
	if d.Sent.IsZero() {
		d.Sent = now
	}
	if news.Updated.IsZero() {
		news.Updated = d.Sent
	}
	if age := now.Sub(d.Sent); news.Open && age > e.policy.MaxEventAge {
		// A late resolution is still true; a late opening may be long over.
		base.Why = fmt.Sprintf("stale: the incident news is %s old (max %s)", age.Round(time.Second), e.policy.MaxEventAge)
		e.report(ctx, &base)
		return []Outcome{base}, nil
	}
	claim := e.bookkeeping(d.ID)
	won, err := e.store.Claim(ctx, routestate.Claim{ID: claim, At: now, Expires: now.Add(e.policy.ClaimTTL)})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", d.ID, err)
	}
	if !won {
		base.Duplicate, base.Why = true, "delivery already handled"
		e.report(ctx, &base)
		return []Outcome{base}, nil
	}
	outs, err := e.applyIncident(ctx, base, news, d.ID, now)
	if err != nil {
		if rerr := e.store.Release(ctx, claim); rerr != nil {
			e.log.Warn("remediation could not release a claim; a retry will be taken for a duplicate",
				slog.String("event_id", d.ID), slog.String("error", rerr.Error()))
		}
		return nil, err
	}
	for i := range outs {
		e.report(ctx, &outs[i])
	}
	return outs, nil
}

func (e *Engine) applyIncident(ctx context.Context, base Outcome, news routestate.Incident, eventID string, now time.Time) ([]Outcome, error) {
	news.EventID = eventID
	newer, err := e.recordIncident(ctx, &news)
	if err != nil {
		return nil, err
	}
	if !newer {
		base.Why = "older than the news already recorded for this incident"
		return []Outcome{base}, nil
	}
	routes := e.inventory.On(news)
	if len(routes) == 0 {
		base.Why = fmt.Sprintf("no route of this gateway is on %s in %s", strings.Join(news.Services, ", "), strings.Join(news.Regions, ", "))
		return []Outcome{base}, nil
	}
	var others []routestate.Incident
	if !news.Open {
		all, err := e.store.Incidents(ctx)
		if err != nil {
			return nil, err
		}
		for _, in := range all {
			if in.Open && in.ID != news.ID {
				others = append(others, in)
			}
		}
	}
	outs := make([]Outcome, 0, len(routes))
	for _, route := range routes {
		o := base
		o.Route = route
		if err := e.write(ctx, &o, e.mode, func(cur routestate.State) (Action, routestate.State, string, bool, error) {
			if news.Open {
				act, to, why, ok := e.incidentOpen(news, cur, eventID, now)
				return act, to, why, ok, nil
			}
			act, to, why, ok := e.incidentClosed(news, others, route, cur, eventID, now)
			return act, to, why, ok, nil
		}); err != nil {
			return nil, fmt.Errorf("route %s: %w", route, err)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// recordIncident stores the news unless newer news of the same incident is already stored;
// it reports whether it did. Written in both modes, like burst windows: correlation in a dry
// run must see the same incidents an apply run would.
func (e *Engine) recordIncident(ctx context.Context, news *routestate.Incident) (bool, error) {
	for range maxConflicts {
		cur, err := e.store.Incident(ctx, news.ID)
		if err != nil {
			return false, err
		}
		if cur.Version > 0 && cur.Updated.After(news.Updated) {
			return false, nil
		}
		next := *news
		next.Version = cur.Version
		if next.Start.IsZero() {
			next.Start = cur.Start
		}
		if _, err := e.store.PutIncident(ctx, next); errors.Is(err, routestate.ErrConflict) {
			continue
		} else if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, fmt.Errorf("incident %s: %d conflicting writes in a row", news.ID, maxConflicts)
}

func coolForIncident(cur routestate.State, in routestate.Incident, eventID string, now time.Time, p Policy) routestate.State {
	to := cur
	to.Status, to.Until, to.Reason = routestate.Cooling, now.Add(p.IncidentCooldown), ReasonProviderIncident
	to.Incident, to.IncidentLink, to.Source = in.ID, in.Link, ""
	to.EventID, to.Since, to.UpdatedAt = eventID, now, now
	return to
}

func cooledBy(cur routestate.State, id string) bool {
	return cur.Status == routestate.Cooling && cur.Reason == ReasonProviderIncident && cur.Incident == id
}

// incidentOpen cools an active route for the incident, or extends a cooldown this incident
// set once half of it has run, so a long incident keeps its routes cooled between updates
// without a new action at every update.
func (e *Engine) incidentOpen(in routestate.Incident, cur routestate.State, eventID string, now time.Time) (Action, routestate.State, string, bool) {
	if !cur.Since.IsZero() && in.Updated.Before(cur.Since) {
		return None, cur, fmt.Sprintf("the route changed at %s, after this news (%s)", stamp(cur.Since), stamp(in.Updated)), false
	}
	p := e.policy
	switch {
	case cur.ManualAt(now):
		return None, cur, manualHold(cur), false
	case cur.Effective(now) == routestate.Active:
		return IncidentCool, coolForIncident(cur, in, eventID, now, p), "provider incident open: " + incidentName(in), true
	case cooledBy(cur, in.ID) && cur.Until.Before(now.Add(p.IncidentCooldown/2)):
		return IncidentCool, coolForIncident(cur, in, eventID, now, p), "provider incident still open: cooldown extended", true
	case cooledBy(cur, in.ID):
		return None, cur, "already cooling for this incident", false
	}
	return None, cur, "already " + describe(cur, now) + ": left as is", false
}

// incidentClosed re-enables a route this incident cooled, or hands it to another open
// incident that still covers it; anything else set the route's state and keeps it.
func (e *Engine) incidentClosed(in routestate.Incident, others []routestate.Incident, route string, cur routestate.State, eventID string, now time.Time) (Action, routestate.State, string, bool) {
	if !cooledBy(cur, in.ID) {
		return None, cur, "not cooled by this incident (" + describe(cur, now) + "): left as is", false
	}
	p, _ := e.inventory.Place(route)
	for _, other := range others {
		if p.AffectedBy(other) {
			return IncidentCool, coolForIncident(cur, other, eventID, now, e.policy),
				"incident resolved, but " + incidentName(other) + " is still open on this route", true
		}
	}
	to := cur
	to.Status, to.Until, to.Reason, to.Incident, to.IncidentLink, to.Source = routestate.Active, time.Time{}, "", "", "", ""
	to.EventID, to.Since, to.UpdatedAt = eventID, now, now
	return IncidentEnable, to, "provider incident resolved: " + incidentName(in), true
}

func incidentName(in routestate.Incident) string {
	if in.Title == "" {
		return in.ID
	}
	return in.ID + " (" + in.Title + ")"
}

// correlate finds an open provider incident that covers the route of a burst.
func (e *Engine) correlate(ctx context.Context, rec Record) (string, *routestate.Incident, string, error) {
	p, ok := e.inventory.Place(rec.Route)
	if !ok {
		return CorrelatedNone, nil, fmt.Sprintf("no provider health feed covers this route (provider %s): a configuration or quota problem is as likely as an outage", dash(rec.Provider)), nil
	}
	all, err := e.store.Incidents(ctx)
	if err != nil {
		return "", nil, "", err
	}
	for _, in := range all {
		if in.Open && p.AffectedBy(in) {
			return CorrelatedIncident, &in, "correlated with the open provider incident " + incidentName(in), nil
		}
	}
	return CorrelatedNone, nil, "no open provider incident for " + p.String() + ": likelier a configuration or quota problem", nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
