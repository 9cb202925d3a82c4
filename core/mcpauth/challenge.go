package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// wellKnown is RFC 9728's well-known prefix of protected resource metadata.
const wellKnown = "/.well-known/oauth-protected-resource"

// resourceMetadata is RFC 9728 section 2's document, in the order it is written.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

// metadataURL is RFC 9728 3.1's: the well-known prefix inserted between the resource's
// host and its path, https://gw.example.com/mcp -> https://gw.example.com/.well-known/oauth-protected-resource/mcp.
func metadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnown + u.Path}).String()
}

// MetadataPaths are the paths the gateway must route to ServeMetadata for resource: RFC
// 9728's (the well-known prefix and the resource's path), which our challenges name, and
// the bare prefix that clients which ignore the challenge try at the root (MCP's spec has
// them try both).
func MetadataPaths(resource string) []string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return nil
	}
	if u.Path == "" || u.Path == "/" {
		return []string{wellKnown}
	}
	return []string{wellKnown + u.Path, wellKnown}
}

// MetadataURL is where the protected resource metadata is, as challenges name it.
func (v *Verifier) MetadataURL() string { return v.metadataURL }

// ServeMetadata answers a request to one of MetadataPaths. Both paths serve one document,
// whose resource is the /mcp URI: a client that finds it at the root and checks resource
// against the root URI (RFC 9728 3.3) will refuse it, but telling it the root would have it
// get tokens for an audience Verify refuses; a client that follows our challenges never
// goes there.
func (v *Verifier) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Browser-based MCP clients read the document cross-origin; it is public.
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		// A CORS preflight: browser clients send MCP-Protocol-Version with the GET.
		h.Set("Access-Control-Allow-Methods", "GET")
		h.Set("Access-Control-Allow-Headers", "*")
		h.Set("Access-Control-Max-Age", "3600")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		writeError(w, http.StatusMethodNotAllowed, "invalid_request", "the protected resource metadata is read with GET")
		return
	}
	h.Set("Content-Type", "application/json")
	// It changes only with the config, which a deploy replaces.
	h.Set("Cache-Control", "max-age=3600")
	h.Set("Content-Length", strconv.Itoa(len(v.metadata)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(v.metadata)
	}
}

// Challenge answers a request Verify refused with err (ErrNoToken or nil: a request
// without a token). The WWW-Authenticate header names the metadata (RFC 9728 5.1), from
// which an MCP client finds the authorization server, and the required scopes (RFC 6750 3).
func (v *Verifier) Challenge(w http.ResponseWriter, err error) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	var e *Error
	desc := ""
	if errors.As(err, &e) {
		desc = e.Description
	}
	switch {
	case err == nil || errors.Is(err, ErrNoToken):
		h.Set("WWW-Authenticate", v.challenge(""))
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error_description": "an OAuth access token is required: see the resource_metadata of WWW-Authenticate"})
	case errors.Is(err, ErrUnavailable):
		h.Set("Retry-After", strconv.Itoa(int(RetryAfter.Seconds())))
		writeError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the token cannot be checked now: the authorization server cannot be reached")
	case errors.Is(err, ErrInsufficientScope):
		h.Set("WWW-Authenticate", v.challenge("insufficient_scope"))
		writeError(w, http.StatusForbidden, "insufficient_scope", desc)
	default:
		if desc == "" {
			desc = "the token is not valid"
		}
		h.Set("WWW-Authenticate", v.challenge("invalid_token"))
		writeError(w, http.StatusUnauthorized, "invalid_token", desc)
	}
}

// challenge is the WWW-Authenticate value. The description stays in the body: RFC 6750
// restricts its characters in the header, and the URLs and claims it quotes need not fit.
func (v *Verifier) challenge(code string) string {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="` + v.metadataURL + `"`)
	if code != "" {
		b.WriteString(`, error="` + code + `"`)
	}
	// Config validation keeps quotes, backslashes and spaces out of scopes.
	if len(v.cfg.Scopes) > 0 {
		b.WriteString(`, scope="` + strings.Join(v.cfg.Scopes, " ") + `"`)
	}
	return b.String()
}

func writeError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// MetadataPaths are the paths this verifier's metadata is served at (MetadataPaths of its
// resource).
func (v *Verifier) MetadataPaths() []string { return MetadataPaths(v.cfg.Resource) }

// Subject verifies raw and returns whom it was issued to: what the gateway's
// Options.MCPOAuth asks of a verifier.
func (v *Verifier) Subject(ctx context.Context, raw string) (string, error) {
	p, err := v.Verify(ctx, raw)
	return p.Subject, err
}
