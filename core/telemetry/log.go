// Package telemetry writes the gateway's structured logs: one JSON object per line, in the key
// names CloudWatch (level, msg) or Cloud Logging (severity, message) expect, with every known
// secret redacted before the line leaves the process.
package telemetry

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
)

// Formats.
const (
	FormatCloudWatch   = "cloudwatch"
	FormatCloudLogging = "cloudlogging"
)

// FormatFromEnv picks the flavour for the platform: Cloud Run (and so Cloud Functions gen2)
// sets K_SERVICE.
func FormatFromEnv(configured string) string {
	if configured != "" {
		return configured
	}
	if os.Getenv("K_SERVICE") != "" {
		return FormatCloudLogging
	}
	return FormatCloudWatch
}

// NewLogger returns a JSON logger on w. secrets are replaced by [REDACTED] wherever they
// appear in a line, raw or JSON-escaped.
func NewLogger(w io.Writer, format string, secrets []string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == FormatCloudLogging {
		opts.ReplaceAttr = cloudLoggingKeys
	}
	return slog.New(slog.NewJSONHandler(NewRedactor(w, secrets), opts))
}

// cloudLoggingKeys renames slog's keys to the special fields Cloud Logging lifts out of
// jsonPayload (severity, message, time).
func cloudLoggingKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.LevelKey:
		a.Key = "severity"
		switch lvl := a.Value.Any().(slog.Level); {
		case lvl >= slog.LevelError:
			a.Value = slog.StringValue("ERROR")
		case lvl >= slog.LevelWarn:
			a.Value = slog.StringValue("WARNING")
		case lvl >= slog.LevelInfo:
			a.Value = slog.StringValue("INFO")
		default:
			a.Value = slog.StringValue("DEBUG")
		}
	case slog.MessageKey:
		a.Key = "message"
	}
	return a
}

// Redactor is a writer that blanks secrets out of every write. slog's JSON handler writes each
// record with one Write, so a secret never straddles two writes.
type Redactor struct {
	mu      sync.Mutex
	w       io.Writer
	secrets [][]byte
	buf     []byte
}

// NewRedactor wraps w.
func NewRedactor(w io.Writer, secrets []string) *Redactor {
	r := &Redactor{w: w}
	seen := map[string]bool{}
	for _, s := range secrets {
		// Very short values would blank out ordinary words; config keys are long.
		if len(s) < 8 || seen[s] {
			continue
		}
		seen[s] = true
		r.secrets = append(r.secrets, []byte(s))
		if esc, _ := json.Marshal(s); len(esc) > 2 && string(esc[1:len(esc)-1]) != s {
			r.secrets = append(r.secrets, esc[1:len(esc)-1])
		}
	}
	// Longest first, so a secret that contains another is blanked whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

var redacted = []byte("[REDACTED]")

func (r *Redactor) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			r.buf = bytes.ReplaceAll(out, s, redacted)
			out = r.buf
		}
	}
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
