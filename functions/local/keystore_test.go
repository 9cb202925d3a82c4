package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyStoreFromTheConfig: key_store: {store: memory} gives the server a key store, so a
// config without keys of its own no longer serves everyone: a request needs a key (a stored
// one); without a key store such a config serves openly, as before. The start-up line says
// which key store it has.
func TestKeyStoreFromTheConfig(t *testing.T) {
	keysFile := filepath.Join(t.TempDir(), "keys.json")
	for _, tc := range []struct {
		section, logged string
		status          int
	}{
		{"key_store: {store: memory}\n", `"key_store":"memory"`, http.StatusUnauthorized},
		{"key_store: {store: file, path: " + keysFile + "}\n", `"key_store":"file ` + keysFile + `"`, http.StatusUnauthorized},
		{"", `"key_store":"none"`, http.StatusOK},
	} {
		_, addr, out := startServerOut(t, tc.section+`
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, "-route-state", "off")
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%q: %d, want %d", tc.section, resp.StatusCode, tc.status)
		}
		if !strings.Contains(out.String(), tc.logged) {
			t.Errorf("%q: the start-up line does not say %s:\n%s", tc.section, tc.logged, out.String())
		}
	}
}
