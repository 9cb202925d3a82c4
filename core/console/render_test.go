package console

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// TestEveryPageDraws draws every page with the data its handler gives it, for each role,
// and checks what every page must have: the landmarks, a label for every input, a viewport,
// no-store, and the script and stylesheet from the console itself.
func TestEveryPageDraws(t *testing.T) {
	c, err := New(http.NotFoundHandler(), &config.Config{}, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	k := &keyJSON{ID: "key_0123456789abcdefghijklmn", Name: "app <b>", Team: "web", Models: []string{"mock/*"}, Version: 3,
		Rate: &rateJSON{RequestsPerMinute: 60}, Budget: &budgetJSON{USDPerDay: 5}, CreatedAt: "2026-12-01T09:00:00Z",
		PerModel: map[string]*modelLimitsJSON{"openai/*": {Budget: &budgetJSON{USDPerDay: 1}}}, Source: "store"}
	sp, _ := usageSpan("day", "", "", t0)
	u := &usageAnswer{Rows: []usageRow{{Period: "2026-12-01", Model: "mock/echo", usageCounts: usageCounts{Requests: 2, InputTokens: 10, OutputTokens: 5, CostUSD: 0.001}}}}
	spend, tokens, requests := usageCharts(u, sp)
	data := map[string]map[string]any{
		"signin": {"OIDC": true, "Error": "That key does not sign in.", "Return": "/console/keys", "Out": true},
		"keys":   {"Keys": []*keyJSON{k, {ID: "app", Name: "config-app", Source: "config"}}, "Next": "/console/keys?after=x", "Q": "a", "Done": "Saved."},
		"secret": {"Key": &keyJSON{ID: k.ID, Name: k.Name, Secret: "sk-fngate-abc"}, "Made": "created"},
		"key": {"Title": "Key app", "Key": k, "Status": "active", "Usage": u, "Span": sp, "Spend": spend.SVG(), "Tokens": tokens.SVG(),
			"Requests": requests.SVG(), "PerModel": `{"openai/*": {}}`, "Limits": `{"budget": {}}`, "Done": ""},
		"routes": {"Routes": []*routeJSON{{ID: "mock/echo/0", Model: "mock/echo", Connection: "m", Status: "active"},
			{ID: "mock/echo/1", Status: "cooled", Until: "2026-12-01T10:00:00Z", Reason: "provider incident", Source: "incident",
				Remediations: []json.RawMessage{json.RawMessage(`{"action":"cool"}`)}}}},
		"audit": {"Entries": []*auditJSON{{ID: "aud_1", Time: "2026-12-01T09:00:00Z", Actor: "key:ops", Action: "key.create", Target: k.ID,
			After: json.RawMessage(`{"name":"app"}`)}}, "Next": "", "Target": ""},
		"error": {"Status": 403, "StatusText": "Forbidden", "Message": "No."},
	}
	for _, role := range []string{"admin", "team-admin", "viewer", ""} {
		for _, page := range pageNames {
			t.Run(role+"/"+page, func(t *testing.T) {
				var s *Session
				if role != "" {
					s = &Session{SID: "sid", ID: "key:ops", Name: "ops", Role: role, Team: "web", Kind: "key"}
				} else if page != "signin" && page != "error" {
					t.Skip("only the sign-in and error pages are drawn without a session")
				}
				w := httptest.NewRecorder()
				c.render(w, httptest.NewRequest(http.MethodGet, "/console", nil), s, http.StatusOK, page, data[page])
				body := w.Body.String()
				if w.Code != http.StatusOK {
					t.Fatalf("%d: %s", w.Code, body)
				}
				checkPage(t, body)
				if w.Header().Get("Cache-Control") != "no-store" {
					t.Error("a page is cacheable")
				}
				if strings.Contains(body, "<b>") {
					t.Error("a key's name reached the page as markup")
				}
				forms := strings.Count(body, `method="post"`)
				switch {
				case role == "viewer" && page != "signin" && forms != 1:
					t.Errorf("a viewer's %s page has %d POST forms, want sign-out alone", page, forms)
				case role == "team-admin" && page == "routes" && forms != 1:
					t.Errorf("a team-admin's routes page has %d POST forms, want sign-out alone", forms)
				case role == "admin" && page == "key" && forms < 5:
					t.Errorf("an admin's key page has %d POST forms, want its changes", forms)
				}
			})
		}
	}
}

var (
	inputRE = regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`)
	idAttr  = regexp.MustCompile(`\bid="([^"]+)"`)
)

// checkPage holds every page to what the console promises: a language, a viewport, the
// landmarks, a label for each input that a person fills in, unique ids, and markup that
// parses.
func checkPage(t *testing.T, body string) {
	t.Helper()
	for _, want := range []string{`<html lang="en">`, `name="viewport"`, `<main id="main"`, `<header`, `class="skip"`,
		`href="/console/static/console.css"`, `src="/console/static/console.js"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if body := strings.ReplaceAll(body, `xmlns="http://www.w3.org/2000/svg"`, ""); strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		t.Errorf("the page refers to another site: %s", regexp.MustCompile(`https?://[^"' <]+`).FindString(body))
	}
	ids := map[string]int{}
	for _, m := range idAttr.FindAllStringSubmatch(body, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q is used %d times", id, n)
		}
	}
	for _, in := range inputRE.FindAllString(body, -1) {
		if strings.Contains(in, `type="hidden"`) {
			continue
		}
		m := idAttr.FindStringSubmatch(in)
		if m == nil || !strings.Contains(body, `<label for="`+m[1]+`"`) {
			t.Errorf("an input without a label: %s", in)
		}
	}
	d := xml.NewDecoder(strings.NewReader(strings.Replace(body, "<!doctype html>", "", 1)))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
	}
}
