package telemetry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/telemetry"
)

// TestEMFLineFollowsTheSpecification checks the rules CloudWatch applies when it extracts
// metrics: epoch-millisecond timestamp, every dimension and metric present at the root,
// dimension values strings, metric values numbers.
func TestEMFLineFollowsTheSpecification(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 123e6, time.UTC)
	line, err := telemetry.NewEMF(nil, "fngate").Encode(at,
		[]telemetry.Dimension{{Name: "Action", Value: "cool"}, {Name: "Mode", Value: "dry_run"}},
		[]telemetry.Metric{{Name: "RemediationActions", Unit: "Count", Value: 1}, {Name: "LatencyMs", Value: 12.5}},
		map[string]any{"route": "a/b", "applied": false})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(line, []byte("}\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", line)
	}
	var doc struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	var root map[string]any
	if err := json.Unmarshal(line, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(line, &root); err != nil {
		t.Fatal(err)
	}
	if doc.AWS.Timestamp != at.UnixMilli() {
		t.Fatalf("Timestamp = %d, want %d", doc.AWS.Timestamp, at.UnixMilli())
	}
	if len(doc.AWS.CloudWatchMetrics) != 1 {
		t.Fatalf("directives: %+v", doc.AWS.CloudWatchMetrics)
	}
	d := doc.AWS.CloudWatchMetrics[0]
	if d.Namespace != "fngate" || len(d.Dimensions) != 1 || strings.Join(d.Dimensions[0], ",") != "Action,Mode" {
		t.Fatalf("directive %+v", d)
	}
	for _, dim := range d.Dimensions[0] {
		if _, ok := root[dim].(string); !ok {
			t.Errorf("dimension %s is not a string root member: %v", dim, root[dim])
		}
	}
	units := map[string]string{}
	for _, m := range d.Metrics {
		units[m.Name] = m.Unit
		if _, ok := root[m.Name].(float64); !ok {
			t.Errorf("metric %s is not a numeric root member: %v", m.Name, root[m.Name])
		}
	}
	if units["RemediationActions"] != "Count" || units["LatencyMs"] != "None" {
		t.Errorf("units %v", units)
	}
	if root["route"] != "a/b" || root["applied"] != false {
		t.Errorf("properties missing: %v", root)
	}
}

func TestEMFRefusesWhatCloudWatchWouldDrop(t *testing.T) {
	e := telemetry.NewEMF(nil, "fngate")
	at := time.Now()
	one := []telemetry.Metric{{Name: "M", Value: 1}}
	many := make([]telemetry.Dimension, 31)
	for i := range many {
		many[i] = telemetry.Dimension{Name: fmt.Sprint("D", i), Value: "v"}
	}
	cases := map[string]error{}
	_, cases["no metric"] = e.Encode(at, nil, nil, nil)
	_, cases["31 dimensions"] = e.Encode(at, many, one, nil)
	_, cases["property named like a metric"] = e.Encode(at, nil, one, map[string]any{"M": 2})
	_, cases["dimension named like a metric"] = e.Encode(at, []telemetry.Dimension{{Name: "M", Value: "x"}}, one, nil)
	_, cases["property named _aws"] = e.Encode(at, nil, one, map[string]any{"_aws": 1})
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Concurrent writers share stdout; every metric must stay one whole line.
func TestEMFWritesWholeLines(t *testing.T) {
	var b bytes.Buffer
	e := telemetry.NewEMF(&b, "fngate")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = e.Write(time.Now(), []telemetry.Dimension{{Name: "Action", Value: fmt.Sprint(i)}},
				[]telemetry.Metric{{Name: "RemediationActions", Value: 1}}, map[string]any{"pad": strings.Repeat("x", 4096)})
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines, want 20", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("torn line: %.80s...", l)
		}
	}
}

// A Series writes the line Write writes, for any values, dimensions that look like metric
// names included; and refuses what JSON cannot carry.
func TestSeriesWritesWhatWriteWrites(t *testing.T) {
	dims := []telemetry.Dimension{{Name: "Guardrail", Value: `GuardrailLatency "q"`}, {Name: "Action", Value: "block"}}
	at := time.UnixMilli(1796237265008)
	for _, values := range [][]float64{{1, 0.645}, {0, 0}, {3, 1e-9}, {1e21, 123456.789}} {
		metrics := []telemetry.Metric{{Name: "GuardrailDecisions", Unit: "Count", Value: values[0]}, {Name: "GuardrailLatency", Unit: "Milliseconds", Value: values[1]}}
		var viaWrite, viaSeries bytes.Buffer
		if err := telemetry.NewEMF(&viaWrite, "fngate").Write(at, dims, metrics, nil); err != nil {
			t.Fatal(err)
		}
		s, err := telemetry.NewEMF(&viaSeries, "fngate").Series(dims, metrics)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(at, values...); err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(viaWrite.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(viaSeries.Bytes(), &b); err != nil {
			t.Fatalf("%v: %s", err, viaSeries.Bytes())
		}
		if !reflect.DeepEqual(a, b) || !bytes.HasSuffix(viaSeries.Bytes(), []byte("}\n")) {
			t.Errorf("values %v:\nWrite  %s\nSeries %s", values, viaWrite.Bytes(), viaSeries.Bytes())
		}
		if err := s.Write(at, math.NaN(), 1); err == nil {
			t.Error("NaN was written")
		}
		if err := s.Write(at, 1); err == nil {
			t.Error("one value for two metrics was written")
		}
	}
}
