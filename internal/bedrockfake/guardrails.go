package bedrockfake

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// The ApplyGuardrail fake: POST /guardrail/{id}/version/{version}/apply, signed with SigV4
// for service bedrock, answering from the documentation's recorded shapes
// (testdata/guardrails, README there). A gateway test drives it by what it sends:
//
//	"THROTTLE-ME"                    429 ThrottlingException
//	"ignore previous instructions"   blocked by the content filter PROMPT_ATTACK (any case)
//	"FORBIDDEN-TOPIC"                blocked by the denied topic "Forbidden Topic"
//	an image holding ForbiddenImage  blocked by the image content filter VIOLENCE
//	an email address                 anonymized: each email is {EMAIL} in outputs, one output
//	                                 per text block, each match in the PII assessment
//	anything else                    NONE
//
// checked in that order over all the texts and images of the call; an unknown guardrail id
// answers Bedrock's ValidationException. The fake guardrail meters its three policies
// (content filters, denied topics, PII), each ceil(characters/1000) text units per text
// block, and an image unit of the content filters per image. An image block is refused as
// Bedrock refuses it: a format other than png or jpeg, no bytes, bytes that are not an image
// of that format, more than 4 MB, more than 20 in a call.

// GuardrailID is the guardrail a Guardrails fake knows from the start (any version).
const GuardrailID = "fngatetest1"

// ForbiddenImage, anywhere in an image's bytes (a PNG's text chunk, a JPEG's comment), has
// the fake's image content filter block it.
const ForbiddenImage = "FORBIDDEN-IMAGE"

// Names of the recorded shapes, for Recorded.
const (
	ShapePass              = "pass"
	ShapeBlockPromptAttack = "block-prompt-attack"
	ShapeBlockTopic        = "block-topic"
	ShapeBlockImage        = "block-image"
	ShapeAnonymize         = "anonymize"
	ShapeThrottling        = "throttling"
	ShapeValidation        = "validation"
	ShapeInternal          = "internal"
)

//go:embed testdata/guardrails/*.json
var recordedShapes embed.FS

// GuardrailReply is one HTTP answer: a recorded shape, or anything a test makes up (Body
// need not be JSON).
type GuardrailReply struct {
	Status int
	Header map[string]string
	Body   []byte
}

// Recorded returns a recorded shape by name (the Shape constants). It panics on a name that
// has no file: that is the calling test's mistake.
func Recorded(name string) GuardrailReply {
	b, err := recordedShapes.ReadFile("testdata/guardrails/" + name + ".json")
	if err != nil {
		panic("bedrockfake: no recorded guardrail shape " + name)
	}
	var f struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		panic("bedrockfake: recorded shape " + name + ": " + err.Error())
	}
	return GuardrailReply{Status: f.Status, Header: f.Headers, Body: f.Body}
}

// GuardrailCall is one ApplyGuardrail call the fake accepted (signed, well formed).
type GuardrailCall struct {
	ID, Version string
	Source      string // INPUT or OUTPUT
	Texts       []string
	Images      []GuardrailImage
	Region      string // the region of the request's SigV4 scope
	Shape       string // the shape answered, or "forced"
}

// GuardrailImage is an image block of a call.
type GuardrailImage struct {
	Format string // png or jpeg
	Bytes  []byte
}

// Guardrails is the fake. It is safe for concurrent use.
type Guardrails struct {
	srv *httptest.Server

	mu     sync.Mutex
	region string
	known  map[string]bool
	delay  time.Duration
	forced []GuardrailReply
	calls  []GuardrailCall
}

// NewGuardrails starts the fake on loopback, signed requests expected for us-east-1; it
// closes when the test ends.
func NewGuardrails(t testing.TB) *Guardrails {
	g := newGuardrails()
	g.srv = httptest.NewServer(g)
	t.Cleanup(g.srv.Close)
	return g
}

// NewGuardrailsHandler is the fake without a server of its own, for a Server's Guardrails.
func NewGuardrailsHandler() *Guardrails { return newGuardrails() }

func newGuardrails() *Guardrails {
	return &Guardrails{region: "us-east-1", known: map[string]bool{GuardrailID: true}}
}

// URL is the endpoint to point the SDK at (BaseEndpoint or AWS_ENDPOINT_URL); "" for a
// handler mounted on a Server.
func (g *Guardrails) URL() string {
	if g.srv == nil {
		return ""
	}
	return g.srv.URL
}

// Close stops the fake's server before the test ends (its port then refuses connections).
func (g *Guardrails) Close() {
	if g.srv != nil {
		g.srv.Close()
	}
}

// SetRegion sets the region requests must be signed for.
func (g *Guardrails) SetRegion(region string) { g.mu.Lock(); g.region = region; g.mu.Unlock() }

// Add makes a guardrail id known (GuardrailID is from the start).
func (g *Guardrails) Add(id string) { g.mu.Lock(); g.known[id] = true; g.mu.Unlock() }

// SetDelay makes every later call wait d before answering (a client that gives up first
// gets nothing).
func (g *Guardrails) SetDelay(d time.Duration) { g.mu.Lock(); g.delay = d; g.mu.Unlock() }

// Force queues answers for the next calls, one each, before the fake decides by content
// again.
func (g *Guardrails) Force(replies ...GuardrailReply) {
	g.mu.Lock()
	g.forced = append(g.forced, replies...)
	g.mu.Unlock()
}

// Calls returns the calls accepted so far, in order.
func (g *Guardrails) Calls() []GuardrailCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GuardrailCall(nil), g.calls...)
}

// maxApplyBody bounds what the fake reads of a request.
const maxApplyBody = 4 << 20

var (
	guardrailIDPattern      = regexp.MustCompile(`^(([a-z0-9]+)|(arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:guardrail/[a-z0-9]+))$`)
	guardrailVersionPattern = regexp.MustCompile(`^(([1-9][0-9]{0,7})|(DRAFT))$`)
	emailPattern            = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
)

func (g *Guardrails) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, version, ok := applyPath(r)
	if !ok {
		writeException(w, &Exception{Type: "UnknownOperationException", Message: "Unknown operation " + r.Method + " " + r.URL.Path, Status: 404})
		return
	}
	g.mu.Lock()
	region, delay := g.region, g.delay
	g.mu.Unlock()
	scope, ex := checkSigV4(r, region)
	if ex != nil {
		writeException(w, ex)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxApplyBody+1))
	if err != nil {
		return
	}
	call, ex := decodeApply(id, version, body)
	if ex != nil {
		writeException(w, ex)
		return
	}
	call.Region = scope
	if !wait(r, delay) {
		return
	}
	reply, shape := g.answer(&call)
	call.Shape = shape
	g.mu.Lock()
	g.calls = append(g.calls, call)
	g.mu.Unlock()
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(reply.Status)
	_, _ = w.Write(reply.Body)
}

// applyPath reads the operation's path, whose id may be an ARN (with slashes, escaped or not).
func applyPath(r *http.Request) (id, version string, ok bool) {
	p := r.URL.EscapedPath()
	if r.Method != http.MethodPost || !strings.HasPrefix(p, "/guardrail/") || !strings.HasSuffix(p, "/apply") {
		return "", "", false
	}
	p = strings.TrimSuffix(strings.TrimPrefix(p, "/guardrail/"), "/apply")
	i := strings.LastIndex(p, "/version/")
	if i < 0 {
		return "", "", false
	}
	id, err1 := url.PathUnescape(p[:i])
	version, err2 := url.PathUnescape(p[i+len("/version/"):])
	return id, version, err1 == nil && err2 == nil
}

func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

// checkSigV4 refuses what Bedrock refuses before reading a request: no SigV4 signature, one
// scoped to another service or region. It returns the scope's region.
func checkSigV4(r *http.Request, region string) (string, *Exception) {
	auth := r.Header.Get("Authorization")
	cred, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
	if !ok {
		return "", &Exception{Type: "MissingAuthenticationTokenException", Message: "Missing Authentication Token", Status: 403}
	}
	scope, rest, _ := strings.Cut(cred, ",")
	parts := strings.Split(scope, "/")
	switch {
	case len(parts) != 5 || parts[4] != "aws4_request" || !strings.Contains(rest, "SignedHeaders=") || !strings.Contains(rest, "Signature="):
		return "", &Exception{Type: "IncompleteSignatureException", Message: "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature'.", Status: 403}
	case r.Header.Get("X-Amz-Date") == "":
		return "", &Exception{Type: "IncompleteSignatureException", Message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.", Status: 403}
	case parts[3] != "bedrock":
		return "", &Exception{Type: "InvalidSignatureException", Message: "Credential should be scoped to correct service: 'bedrock'.", Status: 403}
	case region != "" && parts[2] != region:
		return "", &Exception{Type: "InvalidSignatureException", Message: fmt.Sprintf("Credential should be scoped to a valid region, not '%s'.", parts[2]), Status: 403}
	}
	return parts[2], nil
}

type applyRequest struct {
	Source      *string `json:"source"`
	OutputScope *string `json:"outputScope"`
	Content     []struct {
		Text *struct {
			Text       *string  `json:"text"`
			Qualifiers []string `json:"qualifiers"`
		} `json:"text"`
		Image *struct {
			Format *string `json:"format"`
			Source *struct {
				Bytes []byte `json:"bytes"` // base64 in JSON, as smithy sends a blob
			} `json:"source"`
		} `json:"image"`
	} `json:"content"`
}

// Bedrock's limits on images: "up to a maximum of 4 MB, with a maximum of 20 images for a
// single request", PNG and JPEG only (User Guide, image content filters).
const (
	maxImageBytes = 4 << 20
	maxImages     = 20
)

// imageMagic is how each format's bytes begin.
var imageMagic = map[string]string{"png": "\x89PNG\r\n\x1a\n", "jpeg": "\xff\xd8\xff"}

// decodeApply reads a request as Bedrock does: the path's id and version by their
// documented patterns, the body strictly (an unknown field is malformed), source and content
// required, each content block a text or an image.
func decodeApply(id, version string, body []byte) (GuardrailCall, *Exception) {
	invalid := func(format string, args ...any) (GuardrailCall, *Exception) {
		return GuardrailCall{}, &Exception{Type: "ValidationException", Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case !guardrailIDPattern.MatchString(id):
		return invalid("1 validation error detected: Value '%s' at 'guardrailIdentifier' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", id, guardrailIDPattern)
	case !guardrailVersionPattern.MatchString(version):
		return invalid("1 validation error detected: Value '%s' at 'guardrailVersion' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", version, guardrailVersionPattern)
	case len(body) > maxApplyBody:
		return invalid("Input is too long for requested guardrail.")
	}
	var req applyRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return GuardrailCall{}, &Exception{Type: "SerializationException", Message: "Start of structure or map found where not expected.", Status: 400}
		}
		return invalid("Malformed input request: %v, please reformat your input and try again.", err)
	}
	if req.Source == nil || *req.Source != "INPUT" && *req.Source != "OUTPUT" {
		got := "null"
		if req.Source != nil {
			got = *req.Source
		}
		return invalid("1 validation error detected: Value '%s' at 'source' failed to satisfy constraint: Member must satisfy enum value set: [INPUT, OUTPUT]", got)
	}
	if req.OutputScope != nil && *req.OutputScope != "INTERVENTIONS" && *req.OutputScope != "FULL" {
		return invalid("1 validation error detected: Value '%s' at 'outputScope' failed to satisfy constraint: Member must satisfy enum value set: [INTERVENTIONS, FULL]", *req.OutputScope)
	}
	if len(req.Content) == 0 {
		return invalid("1 validation error detected: Value null at 'content' failed to satisfy constraint: Member must not be null")
	}
	call := GuardrailCall{ID: id, Version: version, Source: *req.Source}
	for i, c := range req.Content {
		switch {
		case c.Text != nil && c.Image != nil:
			return invalid("Malformed input request: content.%d must have exactly one member, please reformat your input and try again.", i)
		case c.Text != nil && c.Text.Text == nil:
			return invalid("1 validation error detected: Value null at 'content.%d.member.text.text' failed to satisfy constraint: Member must not be null", i+1)
		case c.Text != nil:
			call.Texts = append(call.Texts, *c.Text.Text)
		case c.Image == nil:
			return invalid("Malformed input request: content.%d must have exactly one member, please reformat your input and try again.", i)
		case c.Image.Format == nil || imageMagic[*c.Image.Format] == "":
			got := "null"
			if c.Image.Format != nil {
				got = *c.Image.Format
			}
			return invalid("1 validation error detected: Value '%s' at 'content.%d.member.image.format' failed to satisfy constraint: Member must satisfy enum value set: [png, jpeg]", got, i+1)
		case c.Image.Source == nil || len(c.Image.Source.Bytes) == 0:
			return invalid("1 validation error detected: Value null at 'content.%d.member.image.source' failed to satisfy constraint: Member must not be null", i+1)
		case len(c.Image.Source.Bytes) > maxImageBytes:
			return invalid("The image at content.%d is larger than the 4 MB a guardrail takes.", i+1)
		case !strings.HasPrefix(string(c.Image.Source.Bytes), imageMagic[*c.Image.Format]):
			return invalid("The image at content.%d is not a valid %s image.", i+1, *c.Image.Format)
		default:
			call.Images = append(call.Images, GuardrailImage{Format: *c.Image.Format, Bytes: c.Image.Source.Bytes})
		}
	}
	if len(call.Images) > maxImages {
		return invalid("A guardrail takes at most %d images in a request, got %d.", maxImages, len(call.Images))
	}
	return call, nil
}

// answer is the forced reply, else the one the content calls for.
func (g *Guardrails) answer(c *GuardrailCall) (GuardrailReply, string) {
	g.mu.Lock()
	// An ARN names the guardrail by its last segment.
	known := g.known[c.ID[strings.LastIndex(c.ID, "/")+1:]]
	var forced *GuardrailReply
	if len(g.forced) > 0 {
		forced = &g.forced[0]
		g.forced = g.forced[1:]
	}
	g.mu.Unlock()
	if forced != nil {
		return *forced, "forced"
	}
	if !known {
		return Recorded(ShapeValidation), ShapeValidation
	}
	all := strings.Join(c.Texts, "\n")
	var shape string
	switch {
	case strings.Contains(all, "THROTTLE-ME"):
		return Recorded(ShapeThrottling), ShapeThrottling
	case strings.Contains(strings.ToLower(all), "ignore previous instructions"):
		shape = ShapeBlockPromptAttack
	case strings.Contains(all, "FORBIDDEN-TOPIC"):
		shape = ShapeBlockTopic
	case forbiddenImage(c.Images):
		shape = ShapeBlockImage
	case emailPattern.MatchString(all):
		shape = ShapeAnonymize
	default:
		shape = ShapePass
	}
	reply := Recorded(shape)
	var body map[string]any
	if err := json.Unmarshal(reply.Body, &body); err != nil {
		panic("bedrockfake: recorded shape " + shape + ": " + err.Error())
	}
	units, chars := 0, 0
	for _, t := range c.Texts {
		n := utf8.RuneCountInString(t)
		chars += n
		units += (n + 999) / 1000
	}
	body["usage"] = map[string]int{
		"topicPolicyUnits": units, "contentPolicyUnits": units, "wordPolicyUnits": 0,
		"sensitiveInformationPolicyUnits": units, "sensitiveInformationPolicyFreeUnits": 0,
		"contextualGroundingPolicyUnits": 0, "contentPolicyImageUnits": len(c.Images),
	}
	coverage := map[string]any{"textCharacters": map[string]int{"guarded": chars, "total": chars}}
	if len(c.Images) > 0 {
		coverage["images"] = map[string]int{"guarded": len(c.Images), "total": len(c.Images)}
	}
	body["guardrailCoverage"] = coverage
	if shape == ShapeAnonymize {
		anonymizeEmails(body, c.Texts)
	}
	reply.Body, _ = json.Marshal(body)
	return reply, shape
}

func forbiddenImage(images []GuardrailImage) bool {
	for _, im := range images {
		if strings.Contains(string(im.Bytes), ForbiddenImage) {
			return true
		}
	}
	return false
}

// anonymizeEmails fills the anonymize shape for the texts sent: each email is {EMAIL} in
// one output per text block, and each is a match of the assessment.
func anonymizeEmails(body map[string]any, texts []string) {
	var outputs []map[string]string
	var entities []map[string]any
	for _, t := range texts {
		for _, m := range emailPattern.FindAllString(t, -1) {
			entities = append(entities, map[string]any{"match": m, "type": "EMAIL", "action": "ANONYMIZED", "detected": true})
		}
		outputs = append(outputs, map[string]string{"text": emailPattern.ReplaceAllString(t, "{EMAIL}")})
	}
	body["outputs"] = outputs
	body["assessments"] = []map[string]any{{"sensitiveInformationPolicy": map[string]any{"piiEntities": entities, "regexes": []any{}}}}
}
