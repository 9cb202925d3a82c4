package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

// healthDetail is the detail of an AWS Health event, as "Reference: AWS Health events Amazon
// EventBridge schema" (AWS Health User Guide) documents it; only what remediation reads.
type healthDetail struct {
	EventArn          string `json:"eventArn"`
	Service           string `json:"service"`
	EventTypeCode     string `json:"eventTypeCode"`
	EventTypeCategory string `json:"eventTypeCategory"` // issue | accountNotification | scheduledChange | investigation
	StartTime         string `json:"startTime"`
	LastUpdatedTime   string `json:"lastUpdatedTime"`
	StatusCode        string `json:"statusCode"` // open | closed | upcoming
	EventRegion       string `json:"eventRegion"`
}

// healthLink is the event's page in the AWS Health Dashboard.
const healthLink = "https://health.aws.amazon.com/health/home#/account/event-log?eventID=%s&eventTab=details"

// decodeHealth reads an AWS Health event into incident news. Only issues are incidents;
// scheduled changes and account notifications (and "upcoming" issues) are skipped.
func decodeHealth(payload []byte) (input, error) {
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return input{}, fmt.Errorf("%w: AWS Health envelope: %v", remediation.ErrInvalid, err)
	}
	var d healthDetail
	if err := json.Unmarshal(ev.Detail, &d); err != nil {
		return input{}, fmt.Errorf("%w: AWS Health detail: %v", remediation.ErrInvalid, err)
	}
	if ev.ID == "" || d.EventArn == "" || d.Service == "" {
		return input{}, fmt.Errorf("%w: AWS Health event without an id, eventArn or service", remediation.ErrInvalid)
	}
	in := input{Kind: "health"}
	var open bool
	switch d.StatusCode {
	case "open":
		open = true
	case "closed":
	default:
		in.Skipped++
		return in, nil
	}
	if d.EventTypeCategory != "issue" {
		in.Skipped++
		return in, nil
	}
	// The envelope's region is where the event was delivered; the affected one is eventRegion.
	region := d.EventRegion
	if region == "" {
		region = ev.Region
	}
	updated := healthTime(d.LastUpdatedTime)
	if updated.IsZero() {
		updated = ev.Time
	}
	in.Incidents = append(in.Incidents, remediation.IncidentDelivery{
		// The EventBridge id survives the target's retries, so a retried delivery is recognised.
		ID:   "eb:" + ev.ID,
		Sent: ev.Time,
		Incident: routestate.Incident{
			ID: d.EventArn, Cloud: "aws", Services: []string{d.Service}, Regions: []string{region},
			Open: open, Title: d.EventTypeCode, Link: fmt.Sprintf(healthLink, d.EventArn),
			Start: healthTime(d.StartTime), Updated: updated,
		},
	})
	return in, nil
}

// healthTime reads AWS Health's detail times, which its schema and samples write as RFC 1123
// ("Fri, 27 Jan 2023 06:02:51 GMT"); RFC 3339 is accepted too. Unreadable is zero.
func healthTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
