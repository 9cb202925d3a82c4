package remediation_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/golden"
)

var sample = remediation.Outcome{
	At: time.Date(2026, 11, 29, 12, 0, 4, 0, time.UTC), EventID: "eb:7c1e6a0e-4b9a-4bb4-9f4a-0d6a3f1d2c11",
	Route: "claude/claude-sonnet-4-5", ErrorClass: "rate_limited", Action: remediation.Cool, Mode: remediation.Apply,
	Applied: true, ActionID: "20261129T120004Z-6c0f3e9a1b",
	From: routestate.State{Status: routestate.Active}, To: routestate.State{Status: routestate.Cooling},
}

func TestEMFMetricLine(t *testing.T) {
	var b bytes.Buffer
	if err := remediation.NewEMFMetrics(&b).Count(sample); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "metric_emf.golden"), b.Bytes())
}

func TestCloudLoggingMetricLine(t *testing.T) {
	var b bytes.Buffer
	dry := sample
	dry.Mode, dry.Applied, dry.ActionID = remediation.DryRun, false, ""
	if err := remediation.NewCloudLoggingMetrics(&b).Count(dry); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "metric_cloudlogging.golden"), b.Bytes())
}

// A completed burst also counts in RemediationBursts, by correlation: the line the
// unexplained-bursts and provider-incident alarms (and log-based metrics) count.
var burstSample = func() remediation.Outcome {
	o := sample
	o.Route, o.ErrorClass = "bedrock-us/us.anthropic.claude-sonnet-4-5-v1:0", "unavailable"
	o.Correlation = remediation.CorrelatedIncident
	o.Incident = "arn:aws:health:us-east-1::event/BEDROCK/AWS_BEDROCK_OPERATIONAL_ISSUE/AWS_BEDROCK_OPERATIONAL_ISSUE_7D5C3A91E2F4B"
	o.IncidentLink = "https://health.aws.amazon.com/health/home#/account/event-log?eventID=" + o.Incident + "&eventTab=details"
	return o
}()

func TestEMFBurstMetricLines(t *testing.T) {
	var b bytes.Buffer
	if err := remediation.NewEMFMetrics(&b).Count(burstSample); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "metric_bursts_emf.golden"), b.Bytes())
}

func TestCloudLoggingBurstMetricLines(t *testing.T) {
	var b bytes.Buffer
	o := burstSample
	o.Correlation, o.Incident, o.IncidentLink = remediation.CorrelatedNone, "", ""
	if err := remediation.NewCloudLoggingMetrics(&b).Count(o); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "metric_bursts_cloudlogging.golden"), b.Bytes())
}
