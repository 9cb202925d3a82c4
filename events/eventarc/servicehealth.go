package eventarc

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

// Personalized Service Health writes each update of a service health event to the project's
// log servicehealth.googleapis.com/activity, with resource type servicehealth.googleapis.com/Event
// and a jsonPayload of type google.cloud.servicehealth.logging.v1.EventLog ("Query, export,
// and store Service Health logs" and its log schema reference). A log sink sends them to the
// remediation topic, beside the gateway's provider errors.
const (
	serviceHealthResource = "servicehealth.googleapis.com/Event"
	serviceHealthType     = "type.googleapis.com/google.cloud.servicehealth.logging.v1.EventLog"
)

// eventLog is the part of an EventLog payload remediation reads (JSON names of the proto).
type eventLog struct {
	Type              string    `json:"@type"`
	Title             string    `json:"title"`
	Category          string    `json:"category"`      // INCIDENT
	State             string    `json:"state"`         // ACTIVE | CLOSED
	DetailedState     string    `json:"detailedState"` // EMERGING, CONFIRMED, RESOLVED, MERGED, AUTO_CLOSED, FALSE_POSITIVE
	ImpactedProducts  string    `json:"impactedProducts"`
	ImpactedLocations string    `json:"impactedLocations"`
	Relevance         string    `json:"relevance"` // IMPACTED, RELATED, PARTNER_IMPACTED, NOT_IMPACTED, UNKNOWN
	UpdateTime        time.Time `json:"updateTime"`
	StartTime         time.Time `json:"startTime"`
}

func isServiceHealth(le logEntry) bool {
	if le.Resource.Type == serviceHealthResource {
		return true
	}
	var p struct {
		Type string `json:"@type"`
	}
	return json.Unmarshal(le.JSONPayload, &p) == nil && p.Type == serviceHealthType
}

// decodeServiceHealth reads a Service Health log entry into incident news. Only incidents
// count; an incident is open while its state is ACTIVE, unless Google says this project is
// not impacted.
func decodeServiceHealth(le logEntry, deliveryID string) (Input, error) {
	var p eventLog
	if err := json.Unmarshal(le.JSONPayload, &p); err != nil {
		return Input{}, fmt.Errorf("%w: Service Health payload: %v", remediation.ErrInvalid, err)
	}
	labels := le.Resource.Labels
	if labels["event_id"] == "" || labels["resource_container"] == "" {
		return Input{}, fmt.Errorf("%w: Service Health entry %s without resource labels event_id and resource_container", remediation.ErrInvalid, le.InsertID)
	}
	if p.Category != "INCIDENT" {
		return Input{Skipped: "Service Health " + strings.ToLower(p.Category) + ", not an incident"}, nil
	}
	location := labels["location"]
	if location == "" {
		location = "global"
	}
	project := labels["resource_container"]
	updated := p.UpdateTime
	if updated.IsZero() {
		updated = le.Timestamp
	}
	return Input{Incident: &remediation.IncidentDelivery{
		ID:   deliveryID,
		Sent: le.Timestamp,
		Incident: routestate.Incident{
			// The Service Health API's name for the event.
			ID:       "projects/" + project + "/locations/" + location + "/events/" + labels["event_id"],
			Cloud:    "gcp",
			Services: serviceHealthList(p.ImpactedProducts),
			Regions:  serviceHealthList(p.ImpactedLocations),
			Open:     p.State == "ACTIVE" && p.Relevance != "NOT_IMPACTED",
			Title:    p.Title,
			// The project's Service Health dashboard, which lists the event.
			Link:    "https://console.cloud.google.com/servicehealth?project=" + project,
			Start:   p.StartTime,
			Updated: updated,
		},
	}}, nil
}

// serviceHealthList reads impactedProducts and impactedLocations, which EventLog carries as
// one string in a Python-like list syntax ("['Vertex Gemini API', 'Cloud Run']"); a JSON list
// is read too.
func serviceHealthList(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) == nil {
		return out
	}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	for _, item := range strings.Split(s, ",") {
		if item = strings.Trim(strings.TrimSpace(item), `'"`); item != "" {
			out = append(out, item)
		}
	}
	return out
}
