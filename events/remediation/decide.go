package remediation

import (
	"fmt"
	"slices"
	"time"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/routestate"
)

// Action is what a decision does to a route; the metric's Action dimension.
type Action string

const (
	None     Action = "none"
	Cool     Action = "cool"      // a burst of transient errors: skip the route until the cooldown ends
	Disable  Action = "disable"   // our credentials were refused, or the model is gone
	ChatOnly Action = "chat_only" // the upstream refused legacy completions
	Enable   Action = "enable"    // the sweep: the cooldown ended
	Clear    Action = "clear"     // an operator reset the route
	// IncidentCool and IncidentEnable are a provider incident's: its opening cools the
	// routes on its service and region, its resolution re-enables what it cooled.
	IncidentCool   Action = "incident_cool"
	IncidentEnable Action = "incident_enable"
	Rollback       Action = routestate.ActionRollback
)

// Reasons recorded on disabled routes (the gateway shows them in its skipped list).
const (
	ReasonCredentials   = "credentials"
	ReasonModelNotFound = "model_not_found"
)

// rule is how an error class is handled.
type rule int

const (
	ruleIgnore rule = iota
	ruleBurst
	ruleDisable
	ruleChatOnly
)

// classify maps a record to its rule. Timeouts, bad requests and broken streams are not the
// route's fault often enough to act on: a slow prompt or a client's mistake would cool a
// healthy route.
func classify(r Record) (rule, string) {
	switch record.ErrorClass(r.ErrorClass) {
	case record.RateLimited, record.Overloaded, record.Unavailable:
		return ruleBurst, r.ErrorClass
	case record.Auth:
		return ruleDisable, ReasonCredentials
	case record.NotFound:
		return ruleDisable, ReasonModelNotFound
	case record.Unsupported:
		// A chat request the provider cannot serve (a feature, a modality) says nothing
		// about the route; only a refused completions call makes it chat-only.
		if r.Endpoint == record.EndpointCompletions {
			return ruleChatOnly, "completions_unsupported"
		}
		return ruleIgnore, "unsupported on " + r.Endpoint + " is about the request, not the route"
	}
	return ruleIgnore, "error class " + r.ErrorClass + " is not acted on"
}

// next is the change a rule asks of the route's current record. ok is false, with why, when
// the route already has that change or a stronger one, or changed after the error happened:
// a redelivery or a late event then changes nothing.
func next(rl rule, reason string, rec Record, cur routestate.State, eventID string, now time.Time, p Policy) (act Action, to routestate.State, why string, ok bool) {
	if !cur.Since.IsZero() && rec.Time.Before(cur.Since) {
		return None, cur, fmt.Sprintf("the route changed at %s, after this error (%s)", stamp(cur.Since), stamp(rec.Time)), false
	}
	if cur.ManualAt(now) && rl != ruleChatOnly {
		return None, cur, manualHold(cur), false
	}
	eff := cur.Effective(now)
	to = cur
	to.EventID, to.Since, to.UpdatedAt = eventID, now, now
	if rl != ruleChatOnly {
		to.Source = "" // remediation's status now, not the operator's
	}
	switch rl {
	case ruleBurst:
		if eff != routestate.Active {
			return None, cur, "already " + describe(cur, now), false
		}
		to.Status, to.Until, to.Reason = routestate.Cooling, now.Add(p.Cooldown), reason
		to.Incident, to.IncidentLink = "", ""
		return Cool, to, fmt.Sprintf("%d transient errors within %s (last: %s)", p.BurstErrors, p.BurstWindow, reason), true
	case ruleDisable:
		if eff == routestate.Disabled {
			return None, cur, "already " + describe(cur, now), false
		}
		to.Status, to.Until, to.Reason = routestate.Disabled, time.Time{}, reason
		to.Incident, to.IncidentLink = "", ""
		return Disable, to, fmt.Sprintf("%s error (status %d) disables the route until an operator clears it", rec.ErrorClass, rec.Status), true
	case ruleChatOnly:
		if cur.ChatOnly {
			return None, cur, "already chat-only", false
		}
		to.ChatOnly = true
		return ChatOnly, to, "the upstream refused a completions request (status " + fmt.Sprint(rec.Status) + ")", true
	}
	return None, cur, reason, false
}

// countBurst adds one error to the route's window and reports whether it completes a burst,
// in which case the window restarts empty. Errors before the route's last change do not
// count, nor do errors already outside the window.
func countBurst(w routestate.Window, at, since, now time.Time, p Policy) (routestate.Window, bool) {
	cutoff := now.Add(-p.BurstWindow)
	kept := w.Errors[:0:0]
	for _, t := range append(slices.Clone(w.Errors), at) {
		if t.After(cutoff) && !t.Before(since) {
			kept = append(kept, t)
		}
	}
	slices.SortFunc(kept, func(a, b time.Time) int { return a.Compare(b) })
	if len(kept) >= p.BurstErrors {
		w.Errors = nil
		return w, true
	}
	w.Errors = kept
	return w, false
}

func describe(s routestate.State, now time.Time) string {
	switch s.Effective(now) {
	case routestate.Cooling:
		if s.Incident != "" {
			return "cooling until " + stamp(s.Until) + " (" + s.Reason + " " + s.Incident + ")"
		}
		return "cooling until " + stamp(s.Until) + " (" + s.Reason + ")"
	case routestate.Disabled:
		return "disabled (" + s.Reason + ")"
	}
	return "active"
}

// manualHold is why a decision leaves a route an operator set by hand: self-repair does not
// overrule the operator while the status they chose lasts.
func manualHold(cur routestate.State) string {
	if cur.Status == routestate.Cooling {
		return "cooled by hand until " + stamp(cur.Until) + " (" + cur.Reason + "): left as is"
	}
	return "restored by hand, held until " + stamp(cur.Until) + ": left as is"
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
