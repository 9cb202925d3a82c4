package telemetry

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strconv"
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

// attemptAttrs is an attempt line as the gateway logs it, with user as the client's user
// value and msg as the upstream's error message.
func attemptAttrs(user, msg string) []any {
	return []any{
		slog.String("request_id", "req_abc"), slog.String("model", "example/chat"),
		slog.String("route", "a/model-a"), slog.String("outcome", "error"), slog.Int("status", 400),
		slog.String("error_class", "bad_request"), slog.String("error_code", "invalid_value"),
		slog.String("error_message", msg),
		slog.Any("usage", slog.GroupValue(slog.Int("prompt_tokens", 12), slog.Int("completion_tokens", 3))),
		slog.Float64("cost_usd", 0.0042),
		slog.Group("labels", slog.String("key", "app"), slog.String("user", user), slog.String("metadata.team", "search")),
	}
}

func TestLongLinesAreCutToFitKeepingTheFieldsThatMatter(t *testing.T) {
	big, long := strings.Repeat("u", 3<<20), strings.Repeat("m", 400<<10)
	// Escapes and multi-byte characters, so cuts land next to both.
	escaped := strings.Repeat("\"é\n<\u2028", 40<<10)
	cases := map[string]struct {
		user, msg string
		cut       []string // values that must show the cut marker
		dropped   bool     // free-text fields dropped rather than cut
	}{
		"a 3 MB user":               {user: big, msg: "bad value", cut: []string{"labels.user"}},
		"a long message":            {user: "alice", msg: long, cut: []string{"error_message"}},
		"both long":                 {user: long, msg: long, cut: []string{"labels.user", "error_message"}},
		"escapes at the cut":        {user: escaped, msg: escaped, cut: []string{"labels.user", "error_message"}},
		"a line of many big values": {user: long, msg: long},
	}
	for _, format := range []string{FormatCloudWatch, FormatCloudLogging} {
		for name, tc := range cases {
			t.Run(format+"/"+name, func(t *testing.T) {
				var buf bytes.Buffer
				log := NewLogger(&buf, format, nil)
				attrs := attemptAttrs(tc.user, tc.msg)
				if name == "a line of many big values" {
					// 2,000 values of 1 KiB: cutting each to 256 bytes is not enough.
					for i := range 2000 {
						attrs = append(attrs, slog.String("extra_"+strconv.Itoa(i), strings.Repeat("x", 1024)))
					}
				}
				log.Error("provider_error", attrs...)
				line := buf.Bytes()
				if len(line) > MaxLineBytes {
					t.Fatalf("line of %d bytes, limit %d", len(line), MaxLineBytes)
				}
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("cut line is not JSON: %v", err)
				}
				want := map[string]any{"request_id": "req_abc", "model": "example/chat", "route": "a/model-a",
					"outcome": "error", "status": 400.0, "error_class": "bad_request", "error_code": "invalid_value", "cost_usd": 0.0042}
				for k, v := range want {
					if m[k] != v {
						t.Errorf("%s = %v, want %v", k, m[k], v)
					}
				}
				if u, _ := m["usage"].(map[string]any); u["prompt_tokens"] != 12.0 || u["completion_tokens"] != 3.0 {
					t.Errorf("usage = %v", m["usage"])
				}
				if msgKey := map[string]string{FormatCloudWatch: "msg", FormatCloudLogging: "message"}[format]; m[msgKey] != "provider_error" {
					t.Errorf("%s = %v", msgKey, m[msgKey])
				}
				if note, _ := m["log_cut"].(string); !strings.Contains(note, "the line exceeded") {
					t.Errorf("log_cut = %v, want a note saying the line was cut", m["log_cut"])
				}
				if tc.dropped || tc.cut == nil {
					if _, ok := m["labels"]; ok {
						t.Errorf("labels kept in a line whose free-text fields had to go")
					}
					return
				}
				labels, _ := m["labels"].(map[string]any)
				if labels["key"] != "app" || labels["metadata.team"] != "search" {
					t.Errorf("short labels lost: %v", labels)
				}
				for _, k := range tc.cut {
					var v string
					if l, ok := strings.CutPrefix(k, "labels."); ok {
						v, _ = labels[l].(string)
					} else {
						v, _ = m[k].(string)
					}
					if !strings.Contains(v, " bytes cut]") || len(v) < minCutBytes/6 {
						t.Errorf("%s = %.80q… (%d bytes), want its head and a cut marker", k, v, len(v))
					}
				}
			})
		}
	}
}

func TestCutLinesStayRedacted(t *testing.T) {
	secret := "sk-zq9XYWVUTSRQPONMLKJIH"
	// Whatever the offset of the cut, no piece of the secret may survive it: a cut made before
	// redaction leaves the head of the secret it splits.
	for pad := range len(secret) + 1 {
		var buf bytes.Buffer
		log := NewLogger(&buf, FormatCloudLogging, []string{secret})
		user := strings.Repeat("u", pad) + strings.Repeat("key="+secret+" ", 20000) // over the limit even redacted
		log.Info("request", attemptAttrs(user, "Incorrect API key provided: "+secret)...)
		line := buf.String()
		if len(line) > MaxLineBytes {
			t.Fatalf("pad %d: line of %d bytes", pad, len(line))
		}
		if strings.Contains(line, secret[:4]) {
			i := strings.Index(line, secret[:4])
			t.Fatalf("pad %d: a piece of the secret survived the cut: …%s…", pad, line[max(i-20, 0):min(i+30, len(line))])
		}
		if !strings.Contains(line, "[REDACTED]") || !strings.Contains(line, "bytes cut]") {
			t.Fatalf("pad %d: want a redacted, cut line: %.300s", pad, line)
		}
	}
}

func TestScrubRedactsBeforeCutting(t *testing.T) {
	secret := "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	s := NewSecrets([]string{secret})
	for _, at := range []int{1000, 1010, 1020, 1023} {
		msg := strings.Repeat("x", at) + secret + " is not a valid key"
		got := s.Scrub(msg, 1024)
		if len(got) > 1024 {
			t.Errorf("secret at %d: %d bytes, want at most 1024", at, len(got))
		}
		if strings.Contains(got, secret[:4]) {
			t.Errorf("secret at %d: the head of the secret survived: %q", at, got[900:])
		}
	}
	if v := "a" + strings.Repeat("ñ", 10); Cut(v, 2+len(cutMarker(len(v)))) != "a"+cutMarker(len(v)-1) {
		got := Cut(v, 2+len(cutMarker(len(v))))
		t.Errorf("Cut split a character: %q", got)
	}
	if got := (*Secrets)(nil).Scrub("short", 1024); got != "short" {
		t.Errorf("nil Secrets changed the text: %q", got)
	}
}
