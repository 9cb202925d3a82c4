package gcf

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCompactThroughTheFramework: POST /v1/responses/compact reaches the gateway through the
// functions framework, and the compaction item it answers opens on /v1/responses.
func TestCompactThroughTheFramework(t *testing.T) {
	do := func(path, body string) (int, string) {
		resp, err := http.Post(baseURL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := do("/v1/responses/compact", `{"model":"mock/echo","input":[{"role":"user","content":"my code word is PAPAYA"},{"role":"assistant","content":"Noted."}]}`)
	var c struct {
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &c) != nil || c.Object != "response.compaction" || len(c.Output) != 2 {
		t.Fatalf("compact: %d %s", status, body)
	}
	in, _ := json.Marshal(c.Output[1:])
	if status, body = do("/v1/responses", `{"model":"mock/echo","input":`+string(in)+`}`); status != 200 || !strings.Contains(body, "PAPAYA") {
		t.Fatalf("continuing: %d %s", status, body)
	}
}
