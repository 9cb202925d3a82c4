package vertex

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/providers"
)

// TestClassify: MLflow's gateway rules, case-insensitive, and the route's api over them.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		model, api string
		want       Family
	}{
		{"gemini-2.5-flash", "", Gemini},
		{"medlm-large", "", Gemini},
		{"claude-sonnet-4-5@20250929", "", Claude},
		{"Claude-3-Haiku", "", Claude},
		{"meta/llama-3.3-70b-instruct-maas", "", MaaS},
		{"google/gemini-2.5-flash", "", MaaS},
		{"mistral-large-2411", "", MaaS},
		{"Codestral-2501", "", MaaS},
		{"jamba-1.5-large", "", MaaS},
		{"llama-4-scout-17b-16e-instruct-maas", "", MaaS},
		{"my-claude-build", "", Gemini},
		{"my-claude-build", "claude", Claude},
		{"claude-sonnet-4-5", "gemini", Gemini},
		{"gemini-2.5-flash", "MaaS", MaaS},
	} {
		got, ok := Classify(providers.Target{Model: tt.model, API: tt.api})
		if !ok || got != tt.want {
			t.Errorf("Classify(%q, api %q) = %q %v, want %q", tt.model, tt.api, got, ok, tt.want)
		}
	}
	if _, ok := Classify(providers.Target{Model: "gemini-2.5-flash", API: "openai"}); ok {
		t.Error("api openai accepted")
	}
	p := &Provider{}
	if oe := p.Check(chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`), providers.Target{Model: "x", API: "palm"}); oe == nil ||
		oe.Status != 500 || !strings.Contains(oe.Message, `"palm"`) {
		t.Errorf("unknown api: %v", oe)
	}
}

// TestHosts: regional, global and multi-region hosts, and what endpoint and base_url
// replace.
func TestHosts(t *testing.T) {
	for _, tt := range []struct {
		conn       config.Connection
		grpc, rest string
	}{
		{config.Connection{Project: "p", Location: "us-central1"}, "us-central1-aiplatform.googleapis.com:443", "https://us-central1-aiplatform.googleapis.com"},
		{config.Connection{Project: "p", Location: "global"}, "aiplatform.googleapis.com:443", "https://aiplatform.googleapis.com"},
		{config.Connection{Project: "p", Location: "us"}, "aiplatform.us.rep.googleapis.com:443", "https://aiplatform.us.rep.googleapis.com"},
		{config.Connection{Project: "p", Location: "eu"}, "aiplatform.eu.rep.googleapis.com:443", "https://aiplatform.eu.rep.googleapis.com"},
		{config.Connection{Project: "p", Location: "europe-west4", Endpoint: "vertex.psc.example:443"}, "vertex.psc.example:443", "https://vertex.psc.example"},
		{config.Connection{Project: "p", Location: "europe-west4", Endpoint: "127.0.0.1:9002", Insecure: true}, "127.0.0.1:9002", "http://127.0.0.1:9002"},
		{config.Connection{Project: "p", Location: "europe-west4", Endpoint: "127.0.0.1:9002", Insecure: true, BaseURL: "http://127.0.0.1:9003/"}, "127.0.0.1:9002", "http://127.0.0.1:9003"},
	} {
		pp, err := New(&tt.conn, providers.Env{})
		if err != nil {
			t.Fatalf("%+v: %v", tt.conn, err)
		}
		p := pp.(*Provider)
		if p.grpcEndpoint != tt.grpc || p.restRoot != tt.rest {
			t.Errorf("%s: gRPC %s REST %s, want %s and %s", tt.conn.Location, p.grpcEndpoint, p.restRoot, tt.grpc, tt.rest)
		}
	}
	p := &Provider{project: "p", location: "us"}
	if got, _ := p.maasURL(); got != "/v1/projects/p/locations/us/endpoints/openapi/chat/completions" {
		t.Errorf("maas path %s", got)
	}
}

// TestNewRefuses: settings that could never work are start-up errors naming the setting.
func TestNewRefuses(t *testing.T) {
	for _, tt := range []struct {
		conn config.Connection
		want string
	}{
		{config.Connection{Location: "us-central1"}, "project is required"},
		{config.Connection{Project: "p"}, "location is required"},
		{config.Connection{Project: "p", Location: "us-central1/../x"}, "not a Vertex AI location"},
		{config.Connection{Project: "my project", Location: "us-central1"}, "not a Google Cloud project id"},
		{config.Connection{Project: "p", Location: "us-central1", Endpoint: "http://127.0.0.1:9002"}, "endpoint must be host:port"},
		{config.Connection{Project: "p", Location: "us-central1", BaseURL: "127.0.0.1:9003"}, "base_url must start with"},
	} {
		if _, err := New(&tt.conn, providers.Env{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.conn, err, tt.want)
		}
	}
}
