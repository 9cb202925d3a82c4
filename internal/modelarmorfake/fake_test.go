package modelarmorfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestValidatesLikeTheService: the fake refuses what Model Armor refuses, in Google's error
// shape: a wrong token, an unknown path, unknown members and wrong types; it takes the proto
// (snake_case) names Google's parser takes too.
func TestValidatesLikeTheService(t *testing.T) {
	fake := New(t, Options{})
	path := "/v1/" + DefaultTemplate + ":sanitizeUserPrompt"
	tests := []struct {
		name, path, token, body string
		status                  int
		message                 string
	}{
		{"ok", path, DefaultToken, `{"userPromptData":{"text":"hi"}}`, 200, ""},
		{"snake case", path, DefaultToken, `{"user_prompt_data":{"text":"hi"}}`, 200, ""},
		{"wrong token", path, "other", `{"userPromptData":{"text":"hi"}}`, 401, "invalid authentication"},
		{"other template", "/v1/projects/p/locations/l/templates/x:sanitizeUserPrompt", DefaultToken, `{}`, 404, "not found"},
		{"unknown member", path, DefaultToken, `{"userPromptData":{"text":"hi"},"extra":1}`, 400, `Unknown name "extra"`},
		{"response member on the prompt call", path, DefaultToken, `{"modelResponseData":{"text":"hi"}}`, 400, "Unknown name"},
		{"wrong type", path, DefaultToken, `{"userPromptData":{"text":5}}`, 400, "TYPE_STRING"},
		{"missing data", path, DefaultToken, `{}`, 400, "required"},
		{"not JSON", path, DefaultToken, `text`, 400, "Invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, fake.URL()+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+tt.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %s", resp.StatusCode, body)
			}
			if tt.status == 200 {
				return
			}
			var e struct {
				Error struct {
					Code    int
					Message string
					Status  string
				}
			}
			if json.Unmarshal(body, &e) != nil || e.Error.Code != tt.status || e.Error.Status == "" || !strings.Contains(e.Error.Message, tt.message) {
				t.Fatalf("body %s", body)
			}
		})
	}
}

// TestRecordingsRead: every recording is JSON with the members the fake edits.
func TestRecordingsRead(t *testing.T) {
	for _, name := range []string{"no_match", "rai_match", "pi_and_jailbreak_match", "sdp_inspect_match", "sdp_deidentify", "partial", "failure", "throttled", "permission_denied", "template_basic", "template_deidentify"} {
		if a := Recorded(name); !json.Valid(a.Body) {
			t.Errorf("%s is not JSON", name)
		}
	}
	if a := deidentified("a@b.example x@y.example"); !strings.Contains(string(a.Body), `"[EMAIL_ADDRESS] [EMAIL_ADDRESS]"`) {
		t.Errorf("deidentified %s", a.Body)
	}
	if Recorded("throttled").Status != 429 || Recorded("permission_denied").Status != 403 {
		t.Error("error recordings' statuses")
	}
}
