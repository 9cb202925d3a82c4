package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/internal/mcptest"
)

// Prompts and resources are aggregated as tools are: prompts namespaced, resources under
// namespaced names with their own URIs, each read or got from its server.
func TestPromptsAndResources(t *testing.T) {
	docs := mcptest.NewUpstream(t, "docs", func(s *sdk.Server) {
		s.AddPrompt(&sdk.Prompt{Name: "review", Arguments: []*sdk.PromptArgument{{Name: "file"}}}, func(_ context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "review " + r.Params.Arguments["file"]}}}}, nil
		})
		s.AddResource(&sdk.Resource{Name: "readme", URI: "file:///readme.md", MIMEType: "text/markdown"}, func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, Text: "# fngate"}}}, nil
		})
	})
	other := mcptest.NewUpstream(t, "other", mcptest.Echo("echo", ""))
	for _, c := range []struct {
		name   string
		access *config.MCPAccess
		sees   bool
	}{{"allowed", nil, true}, {"another server only", &config.MCPAccess{Servers: []string{"other"}}, false}} {
		t.Run(c.name, func(t *testing.T) {
			url, rec := gateway(t, mcp.Options{Servers: servers(map[string]string{"docs": docs.URL, "other": other.URL})}, mcpcall.Caller{ID: "k", Access: c.access})
			s := mcptest.Connect(t, url, nil, "2025-06-18")
			prompts, err := s.ListPrompts(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			resources, err := s.ListResources(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !c.sees {
				if len(prompts.Prompts) != 0 || len(resources.Resources) != 0 {
					t.Errorf("listed %v %v", prompts.Prompts, resources.Resources)
				}
				if _, err := s.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "docs__review"}); err == nil || !strings.Contains(err.Error(), "prompt docs__review: not allowed") {
					t.Errorf("get: %v", err)
				}
				if _, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "file:///readme.md"}); err == nil || !strings.Contains(err.Error(), "resource file:///readme.md: no server this key may use lists it") {
					t.Errorf("read: %v", err)
				}
				return
			}
			if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "docs__review" || len(resources.Resources) != 1 || resources.Resources[0].Name != "docs__readme" || resources.Resources[0].URI != "file:///readme.md" {
				t.Fatalf("listed %+v %+v", prompts.Prompts, resources.Resources)
			}
			got, err := s.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "docs__review", Arguments: map[string]string{"file": "main.go"}})
			if err != nil || got.Messages[0].Content.(*sdk.TextContent).Text != "review main.go" {
				t.Fatalf("get: %v %v", got, err)
			}
			if r := rec.last(t); r.Method != "prompts/get" || r.Server != "docs" || r.Name != "review" {
				t.Errorf("record %+v", r)
			}
			read, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "file:///readme.md"})
			if err != nil || read.Contents[0].Text != "# fngate" {
				t.Fatalf("read: %v %v", read, err)
			}
		})
	}
}

// A server on the legacy SSE transport is served where an instance may hold its connection.
func TestSSEUpstream(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "old", Version: "1"}, nil)
	mcptest.Echo("echo", "sse:")(srv)
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	url, _ := gateway(t, mcp.Options{Servers: map[string]*config.MCPServer{"old": {URL: ts.URL, Transport: config.MCPTransportSSE}}, AllowSSE: true}, mcpcall.Caller{ID: "k"})
	s := mcptest.Connect(t, url, nil, "")
	if got := toolNames(t, s); len(got) != 1 || got[0] != "old__echo" {
		t.Fatalf("listed %v", got)
	}
	res, err := call(s, "old__echo", map[string]any{"text": "x"})
	if err != nil || text(t, res) != "sse:x" {
		t.Fatal(res, err)
	}
}

// OAuth client credentials: the gateway gets a token for the upstream (with RFC 8707's
// resource), caches it, and sends it; the upstream sees that token alone.
func TestUpstreamOAuthClientCredentials(t *testing.T) {
	var mu sync.Mutex
	var grants []string
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, _ := r.BasicAuth()
		mu.Lock()
		grants = append(grants, r.PostForm.Get("grant_type")+" "+r.PostForm.Get("resource")+" "+r.PostForm.Get("scope")+" "+id+":"+secret)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "minted-token", "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(idp.Close)
	up := mcptest.NewUpstream(t, "tools", mcptest.Echo("echo", ""))
	srv := servers(map[string]string{"tools": up.URL})
	srv["tools"].OAuth = &config.MCPClientCredentials{TokenURL: idp.URL + "/token", ClientID: "fngate", ClientSecret: "s3cret", Scopes: []string{"tools"}}
	url, _ := gateway(t, mcp.Options{Servers: srv}, mcpcall.Caller{ID: "k"})
	s := mcptest.Connect(t, url, nil, "")
	for range 3 {
		if _, err := call(s, "tools__echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(grants) != 1 || grants[0] != "client_credentials "+up.URL+" tools fngate:s3cret" {
		t.Errorf("token requests %q, want one client_credentials grant for the upstream's URL", grants)
	}
	for _, h := range up.Headers() {
		if h.Get("Authorization") != "Bearer minted-token" {
			t.Errorf("upstream got %q", h.Get("Authorization"))
		}
	}
}
