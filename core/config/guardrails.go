package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fngate/fngate/core/guardrail/local/builtin"
)

// Guardrail is a named content control (guardrails:), applied where models, keys and
// key_defaults attach it (GuardrailUse). Kind says what checks: local (the gateway's own
// patterns and PII masker, no cloud), bedrock (an Amazon Bedrock guardrail, through
// ApplyGuardrail) or model-armor (a Google Cloud Model Armor template).
type Guardrail struct {
	Kind string `yaml:"kind"`

	// local: Mask names the PII the masker replaces (LocalPII); MaskPatterns are the
	// operator's own, by name (the name, upper-cased, is the placeholder: [EMPLOYEE_ID]);
	// Block are regular expressions (RE2) whose match blocks.
	Mask         []string          `yaml:"mask"`
	MaskPatterns map[string]string `yaml:"mask_patterns"`
	Block        []string          `yaml:"block"`

	// bedrock: the guardrail's id (or ARN) and version ("DRAFT" or a number), and the region
	// its runtime is called in (default: the connection region of the platform, AWS_REGION).
	ID      string `yaml:"id"`
	Version string `yaml:"version"`
	Region  string `yaml:"region"`

	// model-armor: the template's full name (projects/P/locations/L/templates/T), and the
	// Sensitive Data Protection de-identify template it uses, which mode: mask requires
	// (Model Armor masks only through one). BaseURL overrides the regional endpoint
	// (https://modelarmor.L.rep.googleapis.com), for tests.
	Template           string `yaml:"template"`
	DeidentifyTemplate string `yaml:"deidentify_template"`
	BaseURL            string `yaml:"base_url"`

	// OnError is what a request gets when the service fails or does not answer in Timeout:
	// closed (the default: refused, nothing goes on unchecked) or open (served unchecked,
	// logged and counted).
	OnError string   `yaml:"on_error"`
	Timeout Duration `yaml:"timeout"`
	// StreamWindow is how many characters of a streamed answer are checked at a time (the
	// most a stream is held back); StreamOverlap how many at the end of each window are held
	// and checked again with the next, so that what is split across two windows (an email, a
	// card number) is still seen whole.
	StreamWindow  int `yaml:"stream_window"`
	StreamOverlap int `yaml:"stream_overlap"`

	Name string `yaml:"-"`
}

// Guardrail kinds.
const (
	GuardrailLocal      = "local"
	GuardrailBedrock    = "bedrock"
	GuardrailModelArmor = "model-armor"
)

// What the local masker recognizes (mask:).
var LocalPII = slices.Clone(builtin.Names[:])

// Where a guardrail applies (on:) and what it does (mode:).
const (
	GuardrailOnInput  = "input"
	GuardrailOnOutput = "output"
	GuardrailOnBoth   = "both"

	// GuardrailModeBlock refuses what matches; GuardrailModeMask masks what the guardrail
	// can mask (and blocks the rest); GuardrailModeLog records what it would have done.
	GuardrailModeBlock = "block"
	GuardrailModeMask  = "mask"
	GuardrailModeLog   = "log"

	GuardrailOnErrorClosed = "closed"
	GuardrailOnErrorOpen   = "open"
)

// Guardrail defaults and bounds.
const (
	DefaultGuardrailTimeout = 2 * time.Second
	MaxGuardrailTimeout     = time.Minute
	DefaultStreamWindow     = 1000
	DefaultStreamOverlap    = 256 // an email is at most 254 characters
	MinStreamWindow         = 100
	MaxStreamWindow         = 100_000
)

// GuardrailUse attaches a guardrail: by name, on input, output or both (the default), in a
// mode (block, the default; mask; log). A model's and a key's add up: a key (its own, else
// key_defaults') can add guardrails to a model's requests, never drop the model's.
type GuardrailUse struct {
	Name string `yaml:"name"`
	On   string `yaml:"on"`
	Mode string `yaml:"mode"`
}

// Input and Output report where the use applies.
func (u *GuardrailUse) Input() bool  { return u.On != GuardrailOnOutput }
func (u *GuardrailUse) Output() bool { return u.On != GuardrailOnInput }

// Window returns the guardrail's stream window and overlap, defaults applied.
func (g *Guardrail) Window() (window, overlap int) {
	window, overlap = g.StreamWindow, g.StreamOverlap
	if window == 0 {
		window = DefaultStreamWindow
	}
	if overlap == 0 {
		overlap = min(DefaultStreamOverlap, window/2)
	}
	return window, overlap
}

// Open reports whether a failure of the guardrail lets the request go on unchecked.
func (g *Guardrail) Open() bool { return g.OnError == GuardrailOnErrorOpen }

// TimeoutOrDefault bounds each call to the guardrail's service.
func (g *Guardrail) TimeoutOrDefault() time.Duration {
	if g.Timeout == 0 {
		return DefaultGuardrailTimeout
	}
	return g.Timeout.D()
}

// guardrailSettings are the settings of each kind, besides kind and the common ones.
var guardrailSettings = map[string][]string{
	GuardrailLocal:      {"mask", "mask_patterns", "block"},
	GuardrailBedrock:    {"id", "version", "region"},
	GuardrailModelArmor: {"template", "deidentify_template", "base_url"},
}

var guardrailCommon = []string{"kind", "on_error", "timeout", "stream_window", "stream_overlap"}

// The names' shapes, compiled on first use: only a config with guardrails reads them, and
// compiling them at start-up cost every cold start about 1,700 allocations.
var (
	armorTemplate   = lazyRegexp(`^projects/[^/]+/locations/([^/]+)/templates/[^/]+$`)
	deidentifyName  = lazyRegexp(`^projects/[^/]+/locations/[^/]+/deidentifyTemplates/[^/]+$`)
	bedrockVersion  = lazyRegexp(`^(DRAFT|[1-9][0-9]{0,7})$`)
	guardrailNaming = lazyRegexp(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ArmorLocation is the location of a Model Armor template name ("" when it is not one).
func ArmorLocation(template string) string {
	if m := armorTemplate().FindStringSubmatch(template); m != nil {
		return m[1]
	}
	return ""
}

func (c *Config) validateGuardrails(bad *problems) {
	for name, g := range c.Guardrails {
		p := "guardrails." + name
		if g == nil {
			bad.add(p, ": empty guardrail")
			continue
		}
		g.Name = name
		if !guardrailNaming().MatchString(name) {
			bad.add(p, ": a guardrail name is letters, digits, '_', '.' and '-', at most 64")
		}
		g.validate(p, bad)
	}
	check := func(p string, uses []GuardrailUse, embedding bool) {
		for i := range uses {
			c.checkUse(fmt.Sprintf("%s[%d]", p, i), &uses[i], embedding, bad)
		}
	}
	for name, m := range c.Models {
		check("models."+name+".guardrails", m.Guardrails, m.Embedding())
	}
	for i := range c.Keys {
		check(fmt.Sprintf("keys[%d].guardrails", i), c.Keys[i].Guardrails, false)
	}
	if c.KeyDefaults != nil {
		check("key_defaults.guardrails", c.KeyDefaults.Guardrails, false)
	}
}

func (g *Guardrail) validate(p string, bad *problems) {
	own, ok := guardrailSettings[g.Kind]
	if !ok {
		bad.add(p+".kind", " must be local, bedrock or model-armor, got %q", g.Kind)
		return
	}
	for _, key := range bad.where.children(p) {
		if !slices.Contains(own, key) && !slices.Contains(guardrailCommon, key) {
			bad.add(p+"."+key, " is not a setting of a %s guardrail (settings: %s)", g.Kind, strings.Join(append(slices.Clone(guardrailCommon), own...), ", "))
		}
	}
	switch g.OnError {
	case "":
		g.OnError = GuardrailOnErrorClosed
	case GuardrailOnErrorClosed, GuardrailOnErrorOpen:
	default:
		bad.add(p+".on_error", " must be open or closed, got %q", g.OnError)
	}
	if t := g.Timeout.D(); t < 0 || t > MaxGuardrailTimeout {
		bad.add(p+".timeout", " must be between 0 (the default, %v) and %v", DefaultGuardrailTimeout, MaxGuardrailTimeout)
	}
	if w := g.StreamWindow; w != 0 && (w < MinStreamWindow || w > MaxStreamWindow) {
		bad.add(p+".stream_window", " must be between %d and %d characters, got %d", MinStreamWindow, MaxStreamWindow, w)
	}
	if w, o := g.Window(); g.StreamOverlap < 0 || o >= w {
		bad.add(p+".stream_overlap", " must be at least 0 and less than stream_window (%d), got %d", w, g.StreamOverlap)
	}
	switch g.Kind {
	case GuardrailLocal:
		g.validateLocal(p, bad)
	case GuardrailBedrock:
		if g.ID == "" {
			bad.add(p+".id", " is required: the guardrail's id or ARN")
		}
		if !bedrockVersion().MatchString(g.Version) {
			bad.add(p+".version", ` is required: "DRAFT" or a version number, got %q`, g.Version)
		}
	case GuardrailModelArmor:
		if ArmorLocation(g.Template) == "" {
			bad.add(p+".template", " must be a template's full name, projects/P/locations/L/templates/T, got %q", g.Template)
		}
		if g.DeidentifyTemplate != "" && !deidentifyName().MatchString(g.DeidentifyTemplate) {
			bad.add(p+".deidentify_template", " must be a de-identify template's full name, projects/P/locations/L/deidentifyTemplates/T, got %q", g.DeidentifyTemplate)
		}
		if g.BaseURL != "" {
			if u, err := url.Parse(g.BaseURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
				bad.add(p+".base_url", " must be an http(s) URL, got %q", g.BaseURL)
			}
		}
	}
}

func (g *Guardrail) validateLocal(p string, bad *problems) {
	if len(g.Mask) == 0 && len(g.MaskPatterns) == 0 && len(g.Block) == 0 {
		bad.add(p, ": a local guardrail needs mask, mask_patterns or block: it would check nothing")
	}
	for i, m := range g.Mask {
		if !slices.Contains(LocalPII, m) {
			bad.add(fmt.Sprintf("%s.mask[%d]", p, i), " must be one of %s, got %q", strings.Join(LocalPII, ", "), m)
		}
	}
	// The rules of pattern names are the masker's own (builtin is a leaf, so the one rule is
	// checked here at load and again by local.New).
	if n := len(g.MaskPatterns); n > builtin.MaxPatterns {
		bad.add(p+".mask_patterns", ": at most %d patterns, got %d", builtin.MaxPatterns, n)
	}
	set, _ := builtin.SetOf(g.Mask)
	for name, re := range g.MaskPatterns {
		if err := set.CheckName(name); err != nil {
			bad.add(p+".mask_patterns."+name, ": %v", err)
		}
		if err := compileGuardPattern(re); err != nil {
			bad.add(p+".mask_patterns."+name, ": %v", err)
		}
	}
	for i, re := range g.Block {
		if err := compileGuardPattern(re); err != nil {
			bad.add(fmt.Sprintf("%s.block[%d]", p, i), ": %v", err)
		}
	}
}

// compileGuardPattern checks a pattern the local guardrail will compile: RE2 (linear time,
// so no input can make a check slow), and not one that matches the empty string, which would
// match every text.
func compileGuardPattern(re string) error {
	c, err := regexp.Compile(re)
	if err != nil {
		return fmt.Errorf("not a regular expression (RE2 syntax): %v", err)
	}
	if c.MatchString("") {
		return fmt.Errorf("%q matches the empty string, so it would match every text", re)
	}
	return nil
}

func (c *Config) checkUse(p string, u *GuardrailUse, embedding bool, bad *problems) {
	for _, key := range bad.where.children(p) {
		if key != "name" && key != "on" && key != "mode" {
			bad.add(p+"."+key, " is not a setting of a guardrail's use (settings: name, on, mode)")
		}
	}
	g := c.Guardrails[u.Name]
	if g == nil {
		names := make([]string, 0, len(c.Guardrails))
		for n := range c.Guardrails {
			names = append(names, n)
		}
		slices.Sort(names)
		if len(names) == 0 {
			bad.add(p+".name", ": no guardrail %q is defined (the config defines no guardrails)", u.Name)
			return
		}
		bad.add(p+".name", ": no guardrail %q is defined (guardrails: %s)", u.Name, strings.Join(names, ", "))
		return
	}
	switch u.On {
	case "":
		u.On = GuardrailOnBoth
		if embedding {
			u.On = GuardrailOnInput
		}
	case GuardrailOnInput, GuardrailOnOutput, GuardrailOnBoth:
	default:
		bad.add(p+".on", " must be input, output or both, got %q", u.On)
	}
	if embedding && u.Output() {
		bad.add(p+".on", ": an embedding model has no text output to check; use on: input")
	}
	switch u.Mode {
	case "":
		u.Mode = GuardrailModeBlock
	case GuardrailModeBlock, GuardrailModeLog:
	case GuardrailModeMask:
		switch {
		case g.Kind == GuardrailLocal && len(g.Mask) == 0 && len(g.MaskPatterns) == 0:
			bad.add(p+".mode", ": guardrail %s masks nothing (no mask or mask_patterns); use mode block", u.Name)
		case g.Kind == GuardrailModelArmor && g.DeidentifyTemplate == "":
			bad.add(p+".mode", ": Model Armor masks only through a Sensitive Data Protection de-identify template; set guardrails.%s.deidentify_template to the one template %s uses, or use mode block", u.Name, g.Template)
		}
	default:
		bad.add(p+".mode", " must be block, mask or log, got %q", u.Mode)
	}
}

// CheckKeyGuardrails checks the guardrail uses of a key made at run time (a stored key, which
// the admin API changes without a config load) as validation checks a config key's, and
// fills what they leave out (on: both, mode: block). field names the list in the error
// ("guardrails"); an unknown guardrail is named in it with the configured ones.
func (c *Config) CheckKeyGuardrails(field string, uses []GuardrailUse) error {
	bad := &problems{}
	for i := range uses {
		c.checkUse(fmt.Sprintf("%s[%d]", field, i), &uses[i], false, bad)
	}
	return bad.err()
}

// GuardrailsOf is what applies to a request by a key with limits k (nil: no key) to m: the
// model's uses, then the key's own (else key_defaults'), each once.
func (c *Config) GuardrailsOf(m *Model, k *KeyLimits) []GuardrailUse {
	out := slices.Clone(m.Guardrails)
	var extra []GuardrailUse
	switch {
	case k != nil && k.Guardrails != nil:
		extra = k.Guardrails
	case k != nil && c.KeyDefaults != nil:
		extra = c.KeyDefaults.Guardrails
	}
	for _, u := range extra {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}
