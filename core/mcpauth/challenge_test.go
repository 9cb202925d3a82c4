package mcpauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcpauth"
)

func TestChallenge(t *testing.T) {
	const md = `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"`
	v := mcpauth.New(&config.MCPOAuth{Issuer: "https://idp.example.com", Resource: resource, Scopes: []string{"mcp", "mcp:tools"}}, nil)
	bare := mcpauth.New(&config.MCPOAuth{Issuer: "https://idp.example.com", Resource: resource}, nil)
	for _, tc := range []struct {
		name   string
		v      *mcpauth.Verifier
		err    error
		status int
		www    string // "" for none
		body   string
	}{
		{"no token", v, mcpauth.ErrNoToken, 401, md + `, scope="mcp mcp:tools"`,
			`{"error_description":"an OAuth access token is required: see the resource_metadata of WWW-Authenticate"}`},
		{"no token, nil error", v, nil, 401, md + `, scope="mcp mcp:tools"`,
			`{"error_description":"an OAuth access token is required: see the resource_metadata of WWW-Authenticate"}`},
		{"no token, no scopes configured", bare, mcpauth.ErrNoToken, 401, md,
			`{"error_description":"an OAuth access token is required: see the resource_metadata of WWW-Authenticate"}`},
		{"invalid token", v, &mcpauth.Error{Kind: mcpauth.ErrInvalidToken, Description: "the token has expired"}, 401,
			md + `, error="invalid_token", scope="mcp mcp:tools"`,
			`{"error":"invalid_token","error_description":"the token has expired"}`},
		{"invalid token, no scopes configured", bare, &mcpauth.Error{Kind: mcpauth.ErrInvalidToken, Description: "the token has expired"}, 401,
			md + `, error="invalid_token"`,
			`{"error":"invalid_token","error_description":"the token has expired"}`},
		{"any other error", v, errors.New("boom"), 401, md + `, error="invalid_token", scope="mcp mcp:tools"`,
			`{"error":"invalid_token","error_description":"the token is not valid"}`},
		{"insufficient scope", v, &mcpauth.Error{Kind: mcpauth.ErrInsufficientScope, Description: "the token lacks the scope mcp:tools"}, 403,
			md + `, error="insufficient_scope", scope="mcp mcp:tools"`,
			`{"error":"insufficient_scope","error_description":"the token lacks the scope mcp:tools"}`},
		{"issuer unreachable", v, &mcpauth.Error{Kind: mcpauth.ErrUnavailable, Description: "x"}, 503, "",
			`{"error":"temporarily_unavailable","error_description":"the token cannot be checked now: the authorization server cannot be reached"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			tc.v.Challenge(w, tc.err)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != tc.www {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tc.www)
			}
			if got := strings.TrimSpace(w.Body.String()); got != tc.body {
				t.Errorf("body\n got %s\nwant %s", got, tc.body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
		})
	}
}

func TestMetadata(t *testing.T) {
	for _, tc := range []struct {
		resource, url string
		paths         []string
	}{
		{"https://gw.example.com/mcp", "https://gw.example.com/.well-known/oauth-protected-resource/mcp",
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
		{"https://api.example.com/prod/mcp", "https://api.example.com/.well-known/oauth-protected-resource/prod/mcp",
			[]string{"/.well-known/oauth-protected-resource/prod/mcp", "/.well-known/oauth-protected-resource"}},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
	} {
		v := mcpauth.New(&config.MCPOAuth{Issuer: "https://idp.example.com", Resource: tc.resource}, nil)
		if got := v.MetadataURL(); got != tc.url {
			t.Errorf("%s: MetadataURL %s, want %s", tc.resource, got, tc.url)
		}
		if got := mcpauth.MetadataPaths(tc.resource); !slices.Equal(got, tc.paths) {
			t.Errorf("%s: MetadataPaths %v, want %v", tc.resource, got, tc.paths)
		}
	}

	v := mcpauth.New(&config.MCPOAuth{Issuer: "https://idp.example.com", Resource: resource, Scopes: []string{"mcp"}}, nil)
	const doc = `{"resource":"https://gw.example.com/mcp","authorization_servers":["https://idp.example.com"],"scopes_supported":["mcp"],"bearer_methods_supported":["header"],"resource_name":"fngate MCP gateway"}`
	for _, tc := range []struct {
		method string
		status int
		body   string
		header map[string]string
	}{
		{"GET", 200, doc, map[string]string{"Content-Type": "application/json", "Cache-Control": "max-age=3600", "Access-Control-Allow-Origin": "*"}},
		{"HEAD", 200, "", map[string]string{"Content-Type": "application/json", "Cache-Control": "max-age=3600"}},
		{"OPTIONS", 204, "", map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET"}},
		{"POST", 405, `{"error":"invalid_request","error_description":"the protected resource metadata is read with GET"}`, map[string]string{"Allow": "GET, HEAD, OPTIONS"}},
	} {
		w := httptest.NewRecorder()
		v.ServeMetadata(w, httptest.NewRequest(tc.method, "/.well-known/oauth-protected-resource/mcp", nil))
		if w.Code != tc.status || strings.TrimSpace(w.Body.String()) != tc.body {
			t.Errorf("%s: %d %s\nwant %d %s", tc.method, w.Code, w.Body, tc.status, tc.body)
		}
		for k, want := range tc.header {
			if got := w.Header().Get(k); got != want {
				t.Errorf("%s: %s %q, want %q", tc.method, k, got, want)
			}
		}
	}

	// No scopes configured: scopes_supported is left out rather than an empty list.
	bare := mcpauth.New(&config.MCPOAuth{Issuer: "https://idp.example.com", Resource: resource}, nil)
	w := httptest.NewRecorder()
	bare.ServeMetadata(w, httptest.NewRequest("GET", "/.well-known/oauth-protected-resource", nil))
	if strings.Contains(w.Body.String(), "scopes_supported") {
		t.Errorf("document %s lists scopes", w.Body)
	}
}

// The MCP Go SDK's client, given our 401, finds our metadata and accepts it: the
// challenge parses, names the metadata URL, and the document passes the SDK's checks
// (resource equal to the server URL it connected to, https-or-loopback servers).
func TestMCPGoSDKReadsOurMetadata(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res := srv.URL + "/mcp"
	v := mcpauth.New(&config.MCPOAuth{Issuer: "https://idp.example.com", Resource: res, Scopes: []string{"mcp"}}, nil)
	for _, p := range mcpauth.MetadataPaths(res) {
		mux.HandleFunc(p, v.ServeMetadata)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, err := v.Verify(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		v.Challenge(w, err)
	})

	for _, tc := range []struct {
		name, authorization, error string
	}{
		{"no token", "", ""},
		// Not a JWT: refused before any discovery, so the fake issuer is not needed.
		{"a bad token", "Bearer not-a-jwt", "invalid_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", res, strings.NewReader(`{}`))
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d", resp.StatusCode)
			}
			cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 || cs[0].Scheme != "bearer" {
				t.Fatalf("challenges %+v", cs)
			}
			p := cs[0].Params
			if p["resource_metadata"] != v.MetadataURL() || p["scope"] != "mcp" || p["error"] != tc.error {
				t.Errorf("params %v", p)
			}
			prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), p["resource_metadata"], res, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			if prm.Resource != res || !slices.Equal(prm.AuthorizationServers, []string{"https://idp.example.com"}) ||
				!slices.Equal(prm.ScopesSupported, []string{"mcp"}) || !slices.Equal(prm.BearerMethodsSupported, []string{"header"}) ||
				prm.ResourceName != "fngate MCP gateway" {
				t.Errorf("metadata %+v", prm)
			}
		})
	}

	// The root document is the same one: clients that try the root and do not check
	// resource against it get our /mcp resource.
	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), srv.URL+"/.well-known/oauth-protected-resource", res, srv.Client())
	if err != nil || prm.Resource != res {
		t.Errorf("root metadata %+v, %v", prm, err)
	}
}
