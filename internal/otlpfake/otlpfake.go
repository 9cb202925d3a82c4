// Package otlpfake is an OpenTelemetry collector for tests: it receives OTLP exports over
// HTTP (protobuf, POST /v1/traces and /v1/metrics, gzip or not) and over gRPC (the
// TraceService and MetricsService), decodes them with go.opentelemetry.io/proto/otlp, and
// keeps every span and metric point flattened for assertions, with the time each arrived.
package otlpfake

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	metrics "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one received span.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Name                      string
	Kind                      string // SERVER, CLIENT, ...
	Attrs                     map[string]any
	Resource                  map[string]any
	StatusCode                string // UNSET, OK, ERROR
	StatusMessage             string
	Start, End                time.Time
	Received                  time.Time
	Events                    []Event
}

// Event is one event of a span.
type Event struct {
	Name  string
	Time  time.Time
	Attrs map[string]any
}

// Point is one received metric data point.
type Point struct {
	Metric string
	Unit   string
	Attrs  map[string]any
	// Value is a sum's or a gauge's value; for a histogram, its sum.
	Value float64
	// Count is a histogram's count.
	Count uint64
	// Bounds are a histogram's explicit bucket boundaries.
	Bounds   []float64
	Received time.Time
}

// Receiver collects exports until the test ends.
type Receiver struct {
	// URL is the OTLP/HTTP base endpoint (http://127.0.0.1:port).
	URL string

	mu      sync.Mutex
	spans   []Span
	points  []Point
	headers []http.Header
	changed chan struct{}
}

// New starts an OTLP/HTTP receiver on loopback.
func New(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.serveTraces)
	mux.HandleFunc("POST /v1/metrics", r.serveMetrics)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// NewGRPC starts an OTLP/gRPC receiver on loopback; its URL is http://127.0.0.1:port.
func NewGRPC(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(s, traceService{r: r})
	collmetrics.RegisterMetricsServiceServer(s, metricsService{r: r})
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	r.URL = "http://" + ln.Addr().String()
	return r
}

func readBody(req *http.Request) ([]byte, error) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		body = zr
	}
	return io.ReadAll(body)
}

func (r *Receiver) serveTraces(w http.ResponseWriter, req *http.Request) {
	var msg colltrace.ExportTraceServiceRequest
	if !r.decode(w, req, &msg) {
		return
	}
	r.addTraces(&msg)
	writeProto(w, &colltrace.ExportTraceServiceResponse{})
}

func (r *Receiver) serveMetrics(w http.ResponseWriter, req *http.Request) {
	var msg collmetrics.ExportMetricsServiceRequest
	if !r.decode(w, req, &msg) {
		return
	}
	r.addMetrics(&msg)
	writeProto(w, &collmetrics.ExportMetricsServiceResponse{})
}

// decode reads an export as a collector would: protobuf only.
func (r *Receiver) decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
		return false
	}
	b, err := readBody(req)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	return true
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

type traceService struct {
	colltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, m *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	s.r.addTraces(m)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	collmetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(_ context.Context, m *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	s.r.addMetrics(m)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

func (r *Receiver) addTraces(m *colltrace.ExportTraceServiceRequest) {
	now := time.Now()
	var got []Span
	for _, rs := range m.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				var events []Event
				for _, e := range s.Events {
					events = append(events, Event{Name: e.Name, Time: time.Unix(0, int64(e.TimeUnixNano)), Attrs: attrs(e.Attributes)})
				}
				got = append(got, Span{
					TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId), ParentID: hex.EncodeToString(s.ParentSpanId),
					Name: s.Name, Kind: strings.TrimPrefix(s.Kind.String(), "SPAN_KIND_"),
					Attrs: attrs(s.Attributes), Resource: res,
					StatusCode: strings.TrimPrefix(s.GetStatus().GetCode().String(), "STATUS_CODE_"), StatusMessage: s.GetStatus().GetMessage(),
					Start: time.Unix(0, int64(s.StartTimeUnixNano)), End: time.Unix(0, int64(s.EndTimeUnixNano)), Received: now,
					Events: events,
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.notify()
	r.mu.Unlock()
}

func (r *Receiver) addMetrics(m *collmetrics.ExportMetricsServiceRequest) {
	now := time.Now()
	var got []Point
	for _, rm := range m.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				base := Point{Metric: mt.Name, Unit: mt.Unit, Received: now}
				switch d := mt.Data.(type) {
				case *metrics.Metric_Sum:
					for _, dp := range d.Sum.DataPoints {
						p := base
						p.Attrs, p.Value = attrs(dp.Attributes), number(dp)
						got = append(got, p)
					}
				case *metrics.Metric_Gauge:
					for _, dp := range d.Gauge.DataPoints {
						p := base
						p.Attrs, p.Value = attrs(dp.Attributes), number(dp)
						got = append(got, p)
					}
				case *metrics.Metric_Histogram:
					for _, dp := range d.Histogram.DataPoints {
						p := base
						p.Attrs, p.Value, p.Count, p.Bounds = attrs(dp.Attributes), dp.GetSum(), dp.Count, dp.ExplicitBounds
						got = append(got, p)
					}
				}
			}
		}
	}
	r.mu.Lock()
	r.points = append(r.points, got...)
	r.notify()
	r.mu.Unlock()
}

func number(dp *metrics.NumberDataPoint) float64 {
	if v, ok := dp.Value.(*metrics.NumberDataPoint_AsInt); ok {
		return float64(v.AsInt)
	}
	return dp.GetAsDouble()
}

func (r *Receiver) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// attrs flattens OTLP attributes: strings, int64, float64, bool, []any.
func attrs(kvs []*common.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *common.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_IntValue:
		return x.IntValue
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_BoolValue:
		return x.BoolValue
	case *common.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans returns the spans received so far, in order of arrival.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Points returns the data points of metric name received so far.
func (r *Receiver) Points(name string) []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Point
	for _, p := range r.points {
		if p.Metric == name {
			out = append(out, p)
		}
	}
	return out
}

// Headers returns the headers of every OTLP/HTTP export received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// WaitSpans waits until at least n spans arrived and returns them.
func (r *Receiver) WaitSpans(t testing.TB, n int, timeout time.Duration) []Span {
	t.Helper()
	if !r.wait(timeout, func() bool { return len(r.spans) >= n }) {
		t.Fatalf("otlpfake: %d spans within %v, want %d: %s", len(r.Spans()), timeout, n, Describe(r.Spans()))
	}
	return r.Spans()
}

// WaitMetric waits until metric name has a point and returns its points.
func (r *Receiver) WaitMetric(t testing.TB, name string, timeout time.Duration) []Point {
	t.Helper()
	found := func() bool {
		for _, p := range r.points {
			if p.Metric == name {
				return true
			}
		}
		return false
	}
	if !r.wait(timeout, found) {
		t.Fatalf("otlpfake: no %s point within %v", name, timeout)
	}
	return r.Points(name)
}

func (r *Receiver) wait(timeout time.Duration, done func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, changed := done(), r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

// Describe lists spans for a failure message: name, kind, ids.
func Describe(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "\n  %s %q trace=%s span=%s parent=%s", s.Kind, s.Name, s.TraceID, s.SpanID, s.ParentID)
	}
	return b.String()
}

// Find returns the spans of kind whose name is name, in order of their start.
func Find(spans []Span, kind, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Kind == kind && (name == "" || s.Name == name) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}
