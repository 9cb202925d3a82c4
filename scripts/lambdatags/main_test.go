package main

import (
	"slices"
	"testing"
)

// Each optional feature the config names brings its tag, and only those.
func TestTagsFollowTheConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"connections: {m: {kind: mock}}\nmodels: {}\n", nil},
		{"connections: {v: {kind: vertex, project: p, location: l}}\n", []string{"vertex"}},
		{"telemetry: {otlp: {endpoint: http://127.0.0.1:4318}}\n", []string{"otel"}},
		{"mcp_servers: {gh: {url: https://mcp.example.com/mcp}}\n", []string{"mcp"}},
		{"mcp_servers: {}\n", nil},
		{"guardrails: {pii: {kind: local, mask: [email]}}\n", nil},
		{"guardrails: {std: {kind: bedrock, id: gr-1, version: \"1\"}}\n", []string{"bedrockguard"}},
		{"connections: {v: {kind: vertex}}\ntelemetry: {}\nmcp_servers: {a: {}}\nguardrails: {b: {kind: bedrock}}\n", []string{"vertex", "otel", "mcp", "bedrockguard"}},
	} {
		got, err := tagsFor([]byte(tc.yaml))
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("tagsFor(%q) = %v, %v; want %v", tc.yaml, got, err, tc.want)
		}
	}
	if _, err := tagsFor([]byte("connections: [")); err == nil {
		t.Error("a broken config gave no error")
	}
}
