package infra

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/cost"
)

// The templates' function sizes are the ones the cost model's rule picks from the measured
// run committed in core/cost (docs/cost.md "Template defaults"): a new run that moves the
// choice fails here until the templates follow it, and each stays a variable.
func TestFunctionSizesAreTheMeasuredChoice(t *testing.T) {
	m, err := cost.DefaultMeasured()
	if err != nil {
		t.Fatal(err)
	}
	lambda, err := m.Choose(cost.PlatformLambda, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(lambda.Size.MemoryMB)

	tpl := rawTemplate(t)
	if v := at(tpl, "Parameters", "GatewayMemorySize", "Default"); v == nil || v.Value != want {
		t.Errorf("SAM GatewayMemorySize default = %s, want %s (the rule's choice)", scalar(v), want)
	}
	if v := at(tpl, "Resources", "GatewayFunction", "Properties", "MemorySize"); v == nil || v.Tag != "!Ref" || v.Value != "GatewayMemorySize" {
		t.Errorf("GatewayFunction MemorySize = %s, want !Ref GatewayMemorySize", scalar(v))
	}

	aws := parseModule(t, "terraform/aws")
	if got := literal(t, aws.find("variable", "memory_size"), "default"); got.AsBigFloat().String() != want {
		t.Errorf("terraform aws memory_size default = %s, want %s", got.AsBigFloat().String(), want)
	}

	gcp := parseModule(t, "terraform/gcp")
	conc, _ := literal(t, gcp.find("variable", "max_instance_request_concurrency"), "default").AsBigFloat().Int64()
	gcf, err := m.Choose(cost.PlatformGCF, int(conc))
	if err != nil {
		t.Fatalf("no measured Cloud Functions size at the module's concurrency %d: %v", conc, err)
	}
	if got := literal(t, gcp.find("variable", "available_cpu"), "default").AsString(); got != strconv.FormatFloat(gcf.Size.VCPU, 'g', -1, 64) {
		t.Errorf("terraform gcp available_cpu default = %s, want %g", got, gcf.Size.VCPU)
	}
	// Memory: the instance holds the default concurrency's open streams with room to spare.
	mem := literal(t, gcp.find("variable", "available_memory"), "default").AsString()
	mib, err := strconv.Atoi(strings.TrimSuffix(mem, "Mi"))
	if err != nil {
		t.Fatalf("available_memory default %q is not in Mi", mem)
	}
	f, err := m.Figure(cost.PlatformGCF, gcf.Size.MemoryMB, int(conc), cost.ScenarioChatStream)
	if err != nil {
		t.Fatal(err)
	}
	if float64(mib) < 2*f.PeakRSSMB {
		t.Errorf("available_memory %s holds less than twice the measured peak RSS with %d streams open (%.0f MB)", mem, conc, f.PeakRSSMB)
	}
}
