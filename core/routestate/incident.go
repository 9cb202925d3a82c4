package routestate

import "time"

// Incident is a provider's own announcement of trouble with its service in some regions: an
// AWS Health event, a Google Cloud Service Health incident, as remediation last heard of it.
// Remediation keeps one record per incident so that a burst of errors can be told apart (the
// provider's trouble, or the deployment's own) and a resolution clears only what that
// incident cooled, whatever other incidents are still open.
type Incident struct {
	// ID is the provider's id: an AWS Health event ARN, a Service Health event's resource
	// name (projects/P/locations/L/events/E).
	ID string `json:"id" dynamodbav:"id" firestore:"id"`
	// Cloud is "aws" or "gcp"; Services and Regions are the provider's own names for what is
	// affected (BEDROCK; Vertex Gemini API; us-east-1, global).
	Cloud    string   `json:"cloud" dynamodbav:"cloud" firestore:"cloud"`
	Services []string `json:"services" dynamodbav:"services" firestore:"services"`
	Regions  []string `json:"regions" dynamodbav:"regions" firestore:"regions"`
	// Open is false once the provider says the incident is resolved (or not relevant here).
	Open  bool   `json:"open" dynamodbav:"open" firestore:"open"`
	Title string `json:"title,omitempty" dynamodbav:"title,omitempty" firestore:"title,omitempty"`
	// Link is where a person reads the provider's account of it.
	Link  string    `json:"link,omitempty" dynamodbav:"link,omitempty" firestore:"link,omitempty"`
	Start time.Time `json:"start,omitzero" dynamodbav:"start,omitempty" firestore:"start,omitempty"`
	// Updated is the provider's time for this news; older news arriving later is ignored.
	Updated time.Time `json:"updated" dynamodbav:"updated" firestore:"updated"`
	// EventID is the delivery that brought this news.
	EventID string `json:"event_id,omitempty" dynamodbav:"event_id,omitempty" firestore:"event_id,omitempty"`
	// Version counts writes, as State.Version does.
	Version int64 `json:"version" dynamodbav:"version" firestore:"version"`
}
