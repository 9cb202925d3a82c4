package infra

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The builds sam build and `make package` run link the optional features the config names
// (scripts/lambdatags), and a config without them gets the default tags.
func TestBuildTagsFollowTheConfig(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH")
	}
	dir := t.TempDir()
	with := filepath.Join(dir, "with.yaml")
	without := filepath.Join(dir, "without.yaml")
	if err := os.WriteFile(with, []byte("telemetry: {otlp: {endpoint: http://127.0.0.1:4318}}\nguardrails: {std: {kind: bedrock, id: gr-1, version: \"1\"}}\nmcp_servers: {gh: {url: https://mcp.example.com/mcp}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(without, []byte("connections: {m: {kind: mock}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, config, tags string }{
		{"build-GatewayFunction", with, "-tags lambda.norpc,otel,mcp,bedrockguard,grpcnotrace "},
		{"package", with, "-tags lambda.norpc,otel,mcp,bedrockguard,grpcnotrace "},
		{"build-GatewayFunction", without, "-tags lambda.norpc,grpcnotrace "},
	} {
		cmd := exec.Command(mk, "-n", tc.target, "ARTIFACTS_DIR=/sam/artifacts", "CONFIG="+tc.config)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", tc.target, err, out)
		}
		if !strings.Contains(string(out), tc.tags) {
			t.Errorf("make %s CONFIG=%s does not build with %q:\n%s", tc.target, filepath.Base(tc.config), tc.tags, out)
		}
	}
}
