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
)

// Metrics counts actions: one call for every plan that is not None, in either mode.
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
	return m.emf.Write(o.At,
		[]telemetry.Dimension{{Name: "Action", Value: string(o.Action)}, {Name: "Mode", Value: string(o.Mode)}},
		[]telemetry.Metric{{Name: MetricName, Unit: "Count", Value: 1}},
		map[string]any{"route": o.Route, "event_id": o.EventID, "action_id": o.ActionID, "applied": o.Applied})
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
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err = m.w.Write(append(line, '\n'))
	return err
}
