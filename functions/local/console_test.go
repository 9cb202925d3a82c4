package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServesTheConsole: the local server serves the console beside the gateway and the
// admin API; /console sends a browser to its sign-in page.
func TestServesTheConsole(t *testing.T) {
	_, addr, _ := startServerOut(t, `
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, "-route-state", "off")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get("http://" + addr + "/console")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" {
		t.Fatalf("/console: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = c.Get("http://" + addr + "/console/signin")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `id="key-signin"`) || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("/console/signin: %d\n%s", resp.StatusCode, b)
	}
}
