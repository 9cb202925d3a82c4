package telemetry

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestRedactsSecretsRawAndEscaped(t *testing.T) {
	var buf bytes.Buffer
	secret := `sk-live-"quoted"\key`
	log := NewLogger(&buf, FormatCloudWatch, []string{secret, "short"})
	log.Info("upstream said", slog.String("error_message", "Incorrect API key provided: "+secret), slog.String("note", "short words stay"))
	line := buf.String()
	if strings.Contains(line, "sk-live") {
		t.Errorf("secret leaked: %s", line)
	}
	if !strings.Contains(line, "[REDACTED]") || !strings.Contains(line, "short words stay") {
		t.Errorf("redaction went wrong: %s", line)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("redacted line is not JSON: %v", err)
	}
}

func TestCloudLoggingKeys(t *testing.T) {
	var buf bytes.Buffer
	NewLogger(&buf, FormatCloudLogging, nil).Error("provider_error", slog.String("route", "a/b"))
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["severity"] != "ERROR" || m["message"] != "provider_error" || m["route"] != "a/b" {
		t.Errorf("%v", m)
	}
	if _, ok := m["level"]; ok {
		t.Errorf("slog's level key kept: %v", m)
	}
	buf.Reset()
	NewLogger(&buf, FormatCloudWatch, nil).Warn("x")
	if !strings.Contains(buf.String(), `"level":"WARN","msg":"x"`) {
		t.Errorf("%s", buf.String())
	}
}

func TestFormatFromEnv(t *testing.T) {
	t.Setenv("K_SERVICE", "")
	if FormatFromEnv("") != FormatCloudWatch {
		t.Error("default is not cloudwatch")
	}
	t.Setenv("K_SERVICE", "gateway")
	if FormatFromEnv("") != FormatCloudLogging || FormatFromEnv(FormatCloudWatch) != FormatCloudWatch {
		t.Error("K_SERVICE not honoured, or overrides the config")
	}
}
