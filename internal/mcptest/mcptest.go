// Package mcptest starts upstream MCP servers on loopback for tests, written with the
// official Go SDK as real servers are, and records what reached them.
package mcptest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream is one MCP server under test.
type Upstream struct {
	URL    string // its streamable HTTP endpoint
	Server *mcp.Server

	mu      sync.Mutex
	headers []http.Header
}

// NewUpstream serves a server named name with the tools add registers, stateful as most
// servers deployed today are (sessions in its process).
func NewUpstream(t testing.TB, name string, add func(*mcp.Server)) *Upstream {
	t.Helper()
	u := &Upstream{Server: mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)}
	if add != nil {
		add(u.Server)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.Server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u.URL = ts.URL + "/mcp"
	return u
}

// Headers returns the headers of every request the server got.
func (u *Upstream) Headers() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]http.Header(nil), u.headers...)
}

// EchoInput is the echo tool's input.
type EchoInput struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

// Echo adds a tool named name that answers prefix + its text.
func Echo(name, prefix string) func(*mcp.Server) {
	return func(s *mcp.Server) {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "echoes its text"}, func(_ context.Context, _ *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: prefix + in.Text}}}, nil, nil
		})
	}
}

// Connect opens a client session to endpoint with header set on every request, at protocol
// version (the SDK's latest when empty).
func Connect(t testing.TB, endpoint string, header http.Header, version string) *mcp.ClientSession {
	t.Helper()
	return ConnectWith(t, endpoint, header, version, nil)
}

// ConnectWith is Connect with the client's options.
func ConnectWith(t testing.TB, endpoint string, header http.Header, version string, opt *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opt)
	hc := &http.Client{Transport: headerTransport{header}}
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}
