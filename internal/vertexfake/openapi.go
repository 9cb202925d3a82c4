package vertexfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/fngate/fngate/internal/openaifake"
)

// OpenAPI is Vertex AI's OpenAI-compatible endpoint on loopback. Chat completions posted to
// /v1/projects/{Project}/locations/{Location}/endpoints/openapi/chat/completions are served
// by Fake, an OpenAI fake whose replies the test scripts; any other path is a 404 and a
// missing or wrong bearer token a 401, both in Google's error shape.
type OpenAPI struct {
	*httptest.Server
	Fake *openaifake.Server
	// Project and Location are the only ones the path may name.
	Project, Location string
	// Token, when set, is the access token every request must carry.
	Token string

	mu   sync.Mutex
	seen []Seen
}

// Seen is what the endpoint saw of one request before handing it to Fake.
type Seen struct {
	Path          string
	Query         string // the raw query string
	Authorization string
}

// NewOpenAPI starts the endpoint. Close it when done (it closes Fake too).
func NewOpenAPI() *OpenAPI {
	o := &OpenAPI{Fake: openaifake.New(), Project: Project, Location: Location}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	return o
}

// Close stops the endpoint and its OpenAI fake.
func (o *OpenAPI) Close() {
	o.Server.Close()
	o.Fake.Close()
}

// Seen returns the requests received so far.
func (o *OpenAPI) Seen() []Seen {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Seen(nil), o.seen...)
}

func (o *OpenAPI) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.seen = append(o.seen, Seen{Path: r.URL.Path, Query: r.URL.RawQuery, Authorization: r.Header.Get("Authorization")})
	o.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/projects/"+o.Project+"/locations/"+o.Location+"/endpoints/openapi/chat/completions" {
		GoogleError(w, http.StatusNotFound, "NOT_FOUND", "The requested URL "+r.URL.Path+" was not found on this server.")
		return
	}
	if o.Token != "" && r.Header.Get("Authorization") != "Bearer "+o.Token {
		GoogleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token.")
		return
	}
	r.URL.Path = "/v1/chat/completions"
	o.Fake.Config.Handler.ServeHTTP(w, r)
}

// GoogleError writes {"error":{"code","message","status"}}, Google's REST error shape.
func GoogleError(w http.ResponseWriter, code int, status, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(GoogleErrorBody(code, status, message)))
}

// GoogleErrorBody is the body GoogleError writes, for scripting an openaifake.Reply.
func GoogleErrorBody(code int, status, message string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
	return string(b)
}
