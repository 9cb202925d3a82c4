// Package routestate is the route health overlay the gateway reads while planning: a route is
// active, cooling until a time, or disabled, as set by the remediation handlers.
package routestate

import "time"

// Status of a route.
type Status string

const (
	Active   Status = "active"
	Cooling  Status = "cooling"
	Disabled Status = "disabled"
)

// State is one route's overlay record.
type State struct {
	Route  string    `json:"route" dynamodbav:"route" firestore:"route"`
	Status Status    `json:"status" dynamodbav:"status" firestore:"status"`
	Until  time.Time `json:"until,omitzero" dynamodbav:"until,omitempty" firestore:"until,omitempty"`
	Reason string    `json:"reason,omitempty" dynamodbav:"reason,omitempty" firestore:"reason,omitempty"`
	// Incident and IncidentLink name the provider's own incident that cooled the route (an AWS
	// Health event ARN, a Google Cloud Service Health event, and where to read it): its
	// resolution clears only the routes that carry its id.
	Incident     string `json:"incident,omitempty" dynamodbav:"incident,omitempty" firestore:"incident,omitempty"`
	IncidentLink string `json:"incident_link,omitempty" dynamodbav:"incident_link,omitempty" firestore:"incident_link,omitempty"`
	// Source is SourceManual when an operator set the status by hand (the admin API's cool
	// and restore), empty when remediation did. Remediation leaves a manual status alone
	// while it lasts: a manual cooldown until Until, a manual restore (Active) until Until,
	// its hold.
	Source string `json:"source,omitempty" dynamodbav:"source,omitempty" firestore:"source,omitempty"`
	// ChatOnly marks a route whose upstream refused the legacy completions endpoint.
	ChatOnly bool `json:"chat_only,omitempty" dynamodbav:"chat_only,omitempty" firestore:"chat_only,omitempty"`
	// EventID is the delivery that caused the last change.
	EventID string `json:"event_id,omitempty" dynamodbav:"event_id,omitempty" firestore:"event_id,omitempty"`
	// ActionID names the snapshot of the change that produced this record, for rollback.
	ActionID string `json:"action_id,omitempty" dynamodbav:"action_id,omitempty" firestore:"action_id,omitempty"`
	// Since is when the current status (or chat-only mark) took effect. Errors that happened
	// before it belong to the previous state: remediation ignores them, so a late delivery
	// cannot undo an operator's or the sweep's later decision.
	Since time.Time `json:"since,omitzero" dynamodbav:"since,omitempty" firestore:"since,omitempty"`
	// Version counts writes; a store only accepts a write that names the version it replaces.
	Version   int64     `json:"version" dynamodbav:"version" firestore:"version"`
	UpdatedAt time.Time `json:"updated_at,omitzero" dynamodbav:"updated_at,omitempty" firestore:"updated_at,omitempty"`
}

// SourceManual marks a status an operator set by hand.
const SourceManual = "manual"

// ManualAt reports whether an operator's hand-set status still holds at now: a manual
// cooldown or a manual restore's hold that has not ended.
func (s State) ManualAt(now time.Time) bool {
	return s.Source == SourceManual && now.Before(s.Until)
}

// Effective is the status at now: a cooldown that has ended counts as active even before the
// sweep rewrites the record.
func (s State) Effective(now time.Time) Status {
	if s.Status == Cooling && !now.Before(s.Until) {
		return Active
	}
	if s.Status == "" {
		return Active
	}
	return s.Status
}

// Reader is what the gateway needs: a lookup that never blocks on I/O (implementations serve
// from a cache refreshed in the background).
type Reader interface {
	Lookup(route string) (State, bool)
}
