package remediation

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/fngate/fngate/core/telemetry"
)

// The metric every planned or applied action counts in (contract: the templates alarm on it).
const (
	MetricNamespace = "fngate"
	MetricName      = "RemediationActions"
	// MetricBursts counts completed bursts by Correlation (CorrelatedIncident or
	// CorrelatedNone) and Mode: the alarms page for bursts no provider incident explains and
	// only notify for those one does.
	MetricBursts = "RemediationBursts"
)

// Metrics counts actions: one call for every plan that is not None, in either mode. A plan
// that completes a burst (Outcome.Correlation set) is also counted in MetricBursts.
type Metrics interface {
	Count(o Outcome) error
}

// EMFMetrics counts in CloudWatch through the Embedded Metric Format (AWS).
type EMFMetrics struct{ emf *telemetry.EMF }

// NewEMFMetrics writes EMF lines to w (stdout in Lambda).
func NewEMFMetrics(w io.Writer) *EMFMetrics {
	return &EMFMetrics{emf: telemetry.NewEMF(w, MetricNamespace)}
}

func (m *EMFMetrics) Count(o Outcome) error {
	err := m.emf.Write(o.At,
		[]telemetry.Dimension{{Name: "Action", Value: string(o.Action)}, {Name: "Mode", Value: string(o.Mode)}},
		[]telemetry.Metric{{Name: MetricName, Unit: "Count", Value: 1}},
		map[string]any{"route": o.Route, "event_id": o.EventID, "action_id": o.ActionID, "applied": o.Applied})
	if err != nil || o.Correlation == "" {
		return err
	}
	// A line of its own: an EMF line's dimension sets apply to all its metrics, and the
	// actions alarm sums exactly the (Action, Mode) series.
	return m.emf.Write(o.At,
		[]telemetry.Dimension{{Name: "Correlation", Value: o.Correlation}, {Name: "Mode", Value: string(o.Mode)}},
		[]telemetry.Metric{{Name: MetricBursts, Unit: "Count", Value: 1}},
		map[string]any{"route": o.Route, "event_id": o.EventID, "incident": o.Incident, "incident_link": o.IncidentLink})
}

// CloudLoggingMetrics writes one structured line per action for a log-based metric (GCP):
// the metric filters on jsonPayload.metric and extracts the action and mode labels.
type CloudLoggingMetrics struct {
	mu sync.Mutex
	w  io.Writer
}

// NewCloudLoggingMetrics writes to w (stdout in Cloud Functions).
func NewCloudLoggingMetrics(w io.Writer) *CloudLoggingMetrics { return &CloudLoggingMetrics{w: w} }

func (m *CloudLoggingMetrics) Count(o Outcome) error {
	if err := m.actions(o); err != nil || o.Correlation == "" {
		return err
	}
	return m.bursts(o)
}

func (m *CloudLoggingMetrics) actions(o Outcome) error {
	line, err := json.Marshal(struct {
		Severity string            `json:"severity"`
		Message  string            `json:"message"`
		Time     string            `json:"time"`
		Metric   string            `json:"metric"`
		Action   Action            `json:"action"`
		Mode     Mode              `json:"mode"`
		Applied  bool              `json:"applied"`
		Route    string            `json:"route"`
		EventID  string            `json:"event_id,omitempty"`
		ActionID string            `json:"action_id,omitempty"`
		Labels   map[string]string `json:"logging.googleapis.com/labels"`
	}{
		Severity: "NOTICE",
		Message:  "remediation " + string(o.Action) + " (" + string(o.Mode) + ") on " + o.Route,
		Time:     stamp(o.At),
		Metric:   MetricName,
		Action:   o.Action, Mode: o.Mode, Applied: o.Applied,
		Route: o.Route, EventID: o.EventID, ActionID: o.ActionID,
		Labels: map[string]string{"action": string(o.Action), "mode": string(o.Mode)},
	})
	if err != nil {
		return err
	}
	return m.write(line)
}

// bursts is the line the bursts log-based metric counts, with its correlation label.
func (m *CloudLoggingMetrics) bursts(o Outcome) error {
	line, err := json.Marshal(struct {
		Severity     string            `json:"severity"`
		Message      string            `json:"message"`
		Time         string            `json:"time"`
		Metric       string            `json:"metric"`
		Correlation  string            `json:"correlation"`
		Mode         Mode              `json:"mode"`
		Route        string            `json:"route"`
		EventID      string            `json:"event_id,omitempty"`
		Incident     string            `json:"incident,omitempty"`
		IncidentLink string            `json:"incident_link,omitempty"`
		Labels       map[string]string `json:"logging.googleapis.com/labels"`
	}{
		Severity: "NOTICE",
		Message:  "remediation burst on " + o.Route + " (" + o.Correlation + ")",
		Time:     stamp(o.At),
		Metric:   MetricBursts, Correlation: o.Correlation, Mode: o.Mode,
		Route: o.Route, EventID: o.EventID, Incident: o.Incident, IncidentLink: o.IncidentLink,
		Labels: map[string]string{"correlation": o.Correlation, "mode": string(o.Mode)},
	})
	if err != nil {
		return err
	}
	return m.write(line)
}

func (m *CloudLoggingMetrics) write(line []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.w.Write(append(line, '\n'))
	return err
}
