// Package modelarmorfake is Google Cloud Model Armor on loopback, for the tests of anything
// that calls it: sanitizeUserPrompt, sanitizeModelResponse and the template's GET, over
// HTTP in the service's JSON, plus the OAuth token endpoint its credentials use.
//
// Requests are checked as the service checks them: the bearer token, the path (the one
// template the fake serves), and the body (unknown members and wrong types are a 400 in
// Google's error shape). Answers are the shapes recorded from Google's documentation
// (testdata/, README.md names the pages), chosen by the text so that a gateway test needs no
// scripting:
//
//	"ignore previous instructions"  pi_and_jailbreak match
//	"FORBIDDEN-TOPIC"               rai match (dangerous)
//	an email address                sdp: de-identified (each email "[EMAIL_ADDRESS]") when the
//	                                template has a de-identify template, else an inspect match
//	"THROTTLE-ME"                   429 RESOURCE_EXHAUSTED
//	anything else                   no match
//
// Enqueue forces the next answers (any recorded one, or any status and body); SetDelay
// slows every call; Calls records them.
package modelarmorfake

import (
	"bytes"
	"embed"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
)

//go:embed testdata/*.json
var recordings embed.FS

// DefaultTemplate is the template a fake serves unless Options.Template names another.
const DefaultTemplate = "projects/fngate-test/locations/us-central1/templates/fngate"

// DefaultToken is the access token the fake's token endpoint hands out and its API expects.
const DefaultToken = "fake-model-armor-token"

// Options configure a fake.
type Options struct {
	// Template is the one template served (default DefaultTemplate).
	Template string
	// Deidentify is the Sensitive Data Protection de-identify template the template uses
	// (its sdpSettings.advancedConfig); "" serves a template with the basic SDP config,
	// which only inspects.
	Deidentify string
	// Token is the access token required (default DefaultToken).
	Token string
}

// Answer is one answer the fake gives: an HTTP status and a body.
type Answer struct {
	Status int
	Body   []byte
}

// Recorded returns the recorded answer testdata/<name>.json: no_match, rai_match,
// pi_and_jailbreak_match, sdp_inspect_match, sdp_deidentify, partial, failure (200), or
// throttled (429), permission_denied (403). It panics on a name not recorded: a test's typo.
func Recorded(name string) Answer {
	b, err := recordings.ReadFile("testdata/" + name + ".json")
	if err != nil {
		panic("modelarmorfake: no recorded answer " + name)
	}
	status := http.StatusOK
	var e struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != nil {
		status = e.Error.Code
	}
	return Answer{Status: status, Body: b}
}

// Call is one request the fake received (token requests are not recorded).
type Call struct {
	Method        string // sanitizeUserPrompt, sanitizeModelResponse or GetTemplate
	Path          string
	Text          string // the data item's text, for a sanitize call
	Authorization string
}

// Server is a running fake. Safe for concurrent use.
type Server struct {
	srv  *httptest.Server
	opts Options

	mu          sync.Mutex
	delay       time.Duration
	forced      []Answer
	calls       []Call
	inFlight    int
	maxInFlight int
	tokens      int
}

// New starts a fake on loopback, closed when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Template == "" {
		o.Template = DefaultTemplate
	}
	if o.Token == "" {
		o.Token = DefaultToken
	}
	s := &Server{opts: o}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the fake's endpoint, a guardrail's base_url.
func (s *Server) URL() string { return s.srv.URL }

// Template is the template the fake serves.
func (s *Server) Template() string { return s.opts.Template }

// Guardrail returns a model-armor guardrail pointed at the fake, with the fake's
// de-identify template as its deidentify_template.
func (s *Server) Guardrail() *config.Guardrail {
	return &config.Guardrail{Kind: config.GuardrailModelArmor, Name: "armor", Template: s.opts.Template,
		DeidentifyTemplate: s.opts.Deidentify, BaseURL: s.srv.URL}
}

// SetDelay makes every later call wait d before it is answered (or its client gives up).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Enqueue forces the answers of the next valid, authorized calls, in order.
func (s *Server) Enqueue(a ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forced = append(s.forced, a...)
}

// Calls returns the calls received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// MaxInFlight is the most calls the fake was answering at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// TokensIssued is how many access tokens the token endpoint handed out.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		s.token(w, r)
		return
	}
	call, status, problem := s.parse(r)
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	delay := s.delay
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		GoogleError(w, status, problem)
		return
	}
	if a, ok := s.popForced(); ok {
		write(w, a)
		return
	}
	if call.Method == "GetTemplate" {
		write(w, Answer{Status: http.StatusOK, Body: s.templateBody()})
		return
	}
	write(w, s.decide(call.Text))
}

func (s *Server) popForced() (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.forced) == 0 {
		return Answer{}, false
	}
	a := s.forced[0]
	s.forced = s.forced[1:]
	return a, true
}

func write(w http.ResponseWriter, a Answer) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

var statusNames = map[int]string{
	http.StatusBadRequest: "INVALID_ARGUMENT", http.StatusUnauthorized: "UNAUTHENTICATED",
	http.StatusForbidden: "PERMISSION_DENIED", http.StatusNotFound: "NOT_FOUND",
	http.StatusMethodNotAllowed: "INVALID_ARGUMENT", http.StatusTooManyRequests: "RESOURCE_EXHAUSTED",
	http.StatusInternalServerError: "INTERNAL", http.StatusServiceUnavailable: "UNAVAILABLE",
}

// GoogleError writes Google's REST error body, {"error":{"code","message","status"}}.
func GoogleError(w http.ResponseWriter, code int, message string) {
	write(w, ErrorAnswer(code, message))
}

// ErrorAnswer is an Answer in Google's error shape, for Enqueue.
func ErrorAnswer(code int, message string) Answer {
	status := statusNames[code]
	if status == "" {
		status = "UNKNOWN"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
	return Answer{Status: code, Body: b}
}

var (
	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	jailbreak    = regexp.MustCompile(`(?i)ignore (all )?previous instructions`)
)

// decide is the answer the text calls for.
func (s *Server) decide(text string) Answer {
	switch {
	case strings.Contains(text, "THROTTLE-ME"):
		return Recorded("throttled")
	case jailbreak.MatchString(text):
		return Recorded("pi_and_jailbreak_match")
	case strings.Contains(text, "FORBIDDEN-TOPIC"):
		return Recorded("rai_match")
	case emailPattern.MatchString(text) && s.opts.Deidentify != "":
		return deidentified(text)
	case emailPattern.MatchString(text):
		return inspected(text)
	}
	return Recorded("no_match")
}

// deidentified is the recorded de-identification with this text's emails replaced.
func deidentified(text string) Answer {
	transformed := 0
	masked := emailPattern.ReplaceAllStringFunc(text, func(m string) string {
		transformed += len(m)
		return "[EMAIL_ADDRESS]"
	})
	return edit("sdp_deidentify", func(d map[string]any) {
		d["data"] = map[string]any{"text": masked}
		d["transformedBytes"] = strconv.Itoa(transformed)
	}, "deidentifyResult")
}

// inspected is the recorded inspection with a finding at each of this text's emails.
func inspected(text string) Answer {
	var findings []any
	for _, loc := range emailPattern.FindAllStringIndex(text, -1) {
		findings = append(findings, map[string]any{"infoType": "EMAIL_ADDRESS", "likelihood": "LIKELY",
			"location": map[string]any{"byteRange": map[string]any{"start": strconv.Itoa(loc[0]), "end": strconv.Itoa(loc[1])}}})
	}
	return edit("sdp_inspect_match", func(in map[string]any) { in["findings"] = findings }, "inspectResult")
}

// edit changes the SDP result (inspectResult or deidentifyResult) of a recorded answer.
func edit(name string, change func(map[string]any), member string) Answer {
	a := Recorded(name)
	var doc map[string]any
	if err := json.Unmarshal(a.Body, &doc); err != nil {
		panic("modelarmorfake: recorded " + name + ": " + err.Error())
	}
	sr := doc["sanitizationResult"].(map[string]any)
	sdp := sr["filterResults"].(map[string]any)["sdp"].(map[string]any)["sdpFilterResult"].(map[string]any)
	change(sdp[member].(map[string]any))
	a.Body, _ = json.Marshal(doc)
	return a
}

// templateBody is the Template resource the fake serves, with or without a de-identify
// template.
func (s *Server) templateBody() []byte {
	name := "template_basic"
	if s.opts.Deidentify != "" {
		name = "template_deidentify"
	}
	body := Recorded(name).Body
	parent := s.opts.Template[:strings.Index(s.opts.Template, "/templates/")]
	for placeholder, value := range map[string]string{"TEMPLATE": s.opts.Template,
		"INSPECT": parent + "/inspectTemplates/fngate-inspect", "DEIDENTIFY": s.opts.Deidentify} {
		quoted, _ := json.Marshal(value)
		body = bytes.ReplaceAll(body, []byte(`"`+placeholder+`"`), quoted)
	}
	return body
}
