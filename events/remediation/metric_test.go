package remediation_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/fngate/fngate/core/golden"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
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
