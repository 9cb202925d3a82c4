package telemetry

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Secrets is the set of values no output may show. The log writer (Redactor) blanks them out
// of every line and the gateway out of every upstream message it relays to a client: one
// matcher, so a form the logs hide is hidden from clients too. The zero value and nil hold
// no secret.
type Secrets struct {
	forms [][]byte // longest first
}

// minSecretLen skips very short values, which would blank out ordinary words; keys, tokens
// and passwords in configs are longer.
const minSecretLen = 8

// NewSecrets builds the matcher of values. Each value is matched raw and JSON-escaped (the
// form it takes inside a log line); other spellings (URL-encoded, base64) are values of their
// own, which the config loader derives (see config.Config.Secrets).
func NewSecrets(values []string) *Secrets {
	s := &Secrets{}
	seen := map[string]bool{}
	add := func(f string) {
		if len(f) >= minSecretLen && !seen[f] {
			seen[f] = true
			s.forms = append(s.forms, []byte(f))
		}
	}
	for _, v := range values {
		add(v)
		if esc, _ := json.Marshal(v); len(esc) > 2 {
			add(string(esc[1 : len(esc)-1]))
		}
	}
	// Longest first, so a secret that contains another is blanked whole.
	sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[i]) > len(s.forms[j]) })
	return s
}

// Redacted is what a secret is replaced with.
const Redacted = "[REDACTED]"

var redacted = []byte(Redacted)

// Redact returns v with every secret replaced by [REDACTED].
func (s *Secrets) Redact(v string) string {
	if s == nil {
		return v
	}
	for _, f := range s.forms {
		if strings.Contains(v, string(f)) {
			v = strings.ReplaceAll(v, string(f), Redacted)
		}
	}
	return v
}

// redact returns p with the secrets replaced; p itself when none occurs.
func (s *Secrets) redact(p []byte) []byte {
	if s == nil {
		return p
	}
	for _, f := range s.forms {
		if bytes.Contains(p, f) {
			p = bytes.ReplaceAll(p, f, redacted)
		}
	}
	return p
}

// Scrub redacts v and only then cuts it to at most limit bytes. The order is the point: cut
// first, a secret straddling the cut would lose its tail, no longer match, and show the rest.
func (s *Secrets) Scrub(v string, limit int) string {
	return Cut(s.Redact(v), limit)
}

// Cut returns v whole when it fits in limit bytes, else its longest prefix that ends on a
// character boundary followed by a marker saying how many bytes were cut: limit bytes in
// all, or just the marker when limit leaves no room for text.
func Cut(v string, limit int) string {
	if len(v) <= limit {
		return v
	}
	// The marker of the whole length is at least as long as the final one.
	keep := max(limit-len(cutMarker(len(v))), 0)
	for keep > 0 && !utf8.RuneStart(v[keep]) {
		keep--
	}
	return v[:keep] + cutMarker(len(v)-keep)
}

// cutMarker ends a value of which n bytes were cut.
func cutMarker(n int) string { return "…[" + strconv.Itoa(n) + " bytes cut]" }

// Redactor is a writer that blanks secrets out of every write. slog's JSON handler writes each
// record with one Write, so a secret never straddles two writes.
type Redactor struct {
	mu      sync.Mutex
	w       io.Writer
	secrets *Secrets
}

// NewRedactor wraps w.
func NewRedactor(w io.Writer, secrets []string) *Redactor {
	return &Redactor{w: w, secrets: NewSecrets(secrets)}
}

func (r *Redactor) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(r.secrets.redact(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
