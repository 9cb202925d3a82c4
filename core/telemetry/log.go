// Package telemetry writes the gateway's structured logs: one JSON object per line, in the key
// names CloudWatch (level, msg) or Cloud Logging (severity, message) expect, with every known
// secret redacted before the line leaves the process and no line over the platforms' size
// limit.
//
// log.go builds the logger (text.go: the readable format for a terminal); redact.go holds the secret matcher, which the gateway also applies
// to every upstream message it relays to a client, and the Redactor writer; line.go cuts lines
// that are too long; emf.go writes CloudWatch Embedded Metric Format lines.
package telemetry

import (
	"io"
	"log/slog"
	"os"
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

// NewLogger returns a JSON logger on w (FormatText: a readable one). secrets are replaced by
// [REDACTED] wherever they appear in a line, raw or JSON-escaped; then a line longer than
// MaxLineBytes has its big values cut (see limitLine). In that order, so a cut never splits a
// secret.
func NewLogger(w io.Writer, format string, secrets []string) *slog.Logger {
	if format == FormatText {
		return slog.New(newTextHandler(NewRedactor(w, secrets)))
	}
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == FormatCloudLogging {
		opts.ReplaceAttr = cloudLoggingKeys
	}
	return slog.New(slog.NewJSONHandler(NewRedactor(&lineLimiter{w: w, max: MaxLineBytes}, secrets), opts))
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
