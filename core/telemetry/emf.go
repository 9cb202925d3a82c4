package telemetry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// EMF writes CloudWatch Embedded Metric Format lines: one JSON object per line on stdout,
// which Lambda ships to CloudWatch Logs and CloudWatch turns into metrics, with no agent and
// no PutMetricData call on the request path.
type EMF struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
}

// NewEMF returns a writer of metrics in namespace.
func NewEMF(w io.Writer, namespace string) *EMF { return &EMF{w: w, namespace: namespace} }

// Dimension is one dimension's key and value, in the order they are declared.
type Dimension struct{ Name, Value string }

// Metric is one value. Unit is a CloudWatch unit name ("Count", "Milliseconds"); empty means
// "None".
type Metric struct {
	Name  string
	Unit  string
	Value float64
}

// Limits from the EMF specification.
const (
	emfMaxDimensions = 30
	emfMaxMetrics    = 100
)

// Write emits one line holding the metrics under one dimension set. props are extra root
// members, searchable in Logs Insights but not metrics; their keys must not collide with a
// dimension or metric name, which the format keeps at the root too.
func (e *EMF) Write(at time.Time, dims []Dimension, metrics []Metric, props map[string]any) error {
	line, err := e.Encode(at, dims, metrics, props)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(line)
	return err
}

// Encode renders the line Write would write: root members in a fixed order (the directive,
// dimensions as declared, metrics as given, then props sorted), so output is reproducible.
func (e *EMF) Encode(at time.Time, dims []Dimension, metrics []Metric, props map[string]any) ([]byte, error) {
	if len(metrics) == 0 || len(metrics) > emfMaxMetrics {
		return nil, fmt.Errorf("emf: %d metrics; want 1 to %d", len(metrics), emfMaxMetrics)
	}
	if len(dims) > emfMaxDimensions {
		return nil, fmt.Errorf("emf: %d dimensions; at most %d", len(dims), emfMaxDimensions)
	}
	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type directive struct {
		Namespace  string      `json:"Namespace"`
		Dimensions [][]string  `json:"Dimensions"`
		Metrics    []metricDef `json:"Metrics"`
	}
	var aws struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
	}
	aws.Timestamp = at.UnixMilli()
	d := directive{Namespace: e.namespace, Dimensions: [][]string{make([]string, 0, len(dims))}}
	seen := map[string]bool{"_aws": true}
	claim := func(name string) error {
		if name == "" || seen[name] {
			return fmt.Errorf("emf: root member %q is empty or used twice", name)
		}
		seen[name] = true
		return nil
	}
	for _, dm := range dims {
		if err := claim(dm.Name); err != nil {
			return nil, err
		}
		d.Dimensions[0] = append(d.Dimensions[0], dm.Name)
	}
	for _, m := range metrics {
		if err := claim(m.Name); err != nil {
			return nil, err
		}
		unit := m.Unit
		if unit == "" {
			unit = "None"
		}
		d.Metrics = append(d.Metrics, metricDef{Name: m.Name, Unit: unit})
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		if err := claim(k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	aws.CloudWatchMetrics = []directive{d}

	var b bytes.Buffer
	b.WriteString(`{"_aws":`)
	if err := appendJSON(&b, aws); err != nil {
		return nil, err
	}
	member := func(k string, v any) error {
		b.WriteByte(',')
		if err := appendJSON(&b, k); err != nil {
			return err
		}
		b.WriteByte(':')
		return appendJSON(&b, v)
	}
	for _, dm := range dims {
		if err := member(dm.Name, dm.Value); err != nil {
			return nil, err
		}
	}
	for _, m := range metrics {
		if err := member(m.Name, m.Value); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		if err := member(k, props[k]); err != nil {
			return nil, err
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func appendJSON(b *bytes.Buffer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("emf: %w", err)
	}
	b.Write(j)
	return nil
}

// Series is one dimension set and its metrics' names and units, rendered once for a line
// written on every request: each line then formats only its timestamp and values, where
// Write marshals the whole line (about 15 us).
type Series struct {
	e     *EMF
	head  []byte // {"_aws":{"Timestamp":
	mid   []byte // ,"CloudWatchMetrics":[...]} and the dimensions
	names [][]byte
}

// Series prepares the lines of dims and metrics (their values are Write's).
func (e *EMF) Series(dims []Dimension, metrics []Metric) (*Series, error) {
	zeroed := slices.Clone(metrics)
	for i := range zeroed {
		zeroed[i].Value = 0
	}
	line, err := e.Encode(time.UnixMilli(0), dims, zeroed, nil)
	if err != nil {
		return nil, err
	}
	// The encoded line is {"_aws":{"Timestamp":0,<directive>},<dims>,<metrics>}\n with every
	// value 0: the timestamp is its start, the metrics are its end.
	const ts = `{"_aws":{"Timestamp":0`
	s := &Series{e: e, head: []byte(ts[:len(ts)-1])}
	metricsAt := len(line) - len("}\n")
	for _, m := range metrics {
		name, _ := json.Marshal(m.Name)
		s.names = append(s.names, append(append([]byte{','}, name...), ':'))
		metricsAt -= len(name) + len(`,:0`)
	}
	if !bytes.HasPrefix(line, []byte(ts)) || metricsAt < len(ts) || !bytes.HasPrefix(line[metricsAt:], s.names[0]) {
		return nil, fmt.Errorf("emf: unexpected encoding %q", line)
	}
	s.mid = line[len(ts):metricsAt]
	return s, nil
}

// Write emits one line at at with values, one per metric in the order Series was given.
func (s *Series) Write(at time.Time, values ...float64) error {
	if len(values) != len(s.names) {
		return fmt.Errorf("emf: %d values for %d metrics", len(values), len(s.names))
	}
	b := make([]byte, 0, len(s.head)+len(s.mid)+24*len(values)+40)
	b = append(b, s.head...)
	b = strconv.AppendInt(b, at.UnixMilli(), 10)
	b = append(b, s.mid...)
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("emf: value %v is not a number JSON can carry", v)
		}
		b = append(b, s.names[i]...)
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	b = append(b, "}\n"...)
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	_, err := s.e.w.Write(b)
	return err
}
