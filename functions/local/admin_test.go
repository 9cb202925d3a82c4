package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const localAdminKey = "sk-local-admin-for-tests"

func adminCall(t *testing.T, addr, method, path string, body any, token string) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, "http://"+addr+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func chat(t *testing.T, addr, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAdminAPIBesideTheGateway: the local server serves /admin/v1/ on the gateway's stores,
// so a key made through it works at once, its use shows in its usage, a route cooled by
// hand shows in /routes, and the key deleted stops working (within the 5 s bound).
func TestAdminAPIBesideTheGateway(t *testing.T) {
	sum := sha256.Sum256([]byte(localAdminKey))
	for _, store := range []string{"memory", "file"} {
		t.Run(store, func(t *testing.T) {
			section := "key_store: {store: memory}\n"
			if store == "file" {
				section = "key_store: {store: file, path: " + filepath.Join(t.TempDir(), "keys.json") + "}\n"
			}
			_, addr := startServer(t, section+`
admin:
  keys: [{name: ops, sha256: "`+hex.EncodeToString(sum[:])+`", role: admin}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, "-route-state", filepath.Join(t.TempDir(), "routes.json"))
			code, made := adminCall(t, addr, http.MethodPost, "/admin/v1/keys", map[string]any{"name": "app"}, localAdminKey)
			if code != http.StatusCreated {
				t.Fatalf("create: %d %v", code, made)
			}
			secret, id := made["key"].(string), made["id"].(string)
			if got := chat(t, addr, secret); got != http.StatusOK {
				t.Fatalf("the new key: %d", got)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, u := adminCall(t, addr, http.MethodGet, "/admin/v1/usage?key="+id, nil, localAdminKey)
				if tot, _ := u["totals"].(map[string]any); tot != nil && tot["requests"] == 1.0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("usage never showed the request: %v", u)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if code, r := adminCall(t, addr, http.MethodPost, "/admin/v1/routes/mock%2Fecho/cool", map[string]any{"for": "5m"}, localAdminKey); code != http.StatusOK || r["status"] != "cooled" {
				t.Fatalf("cool: %d %v", code, r)
			}
			if code, r := adminCall(t, addr, http.MethodPost, "/admin/v1/routes/mock%2Fecho/restore", nil, localAdminKey); code != http.StatusOK || r["status"] != "active" {
				t.Fatalf("restore: %d %v", code, r)
			}
			if code, _ := adminCall(t, addr, http.MethodDelete, "/admin/v1/keys/"+id, nil, localAdminKey); code != http.StatusOK {
				t.Fatalf("delete: %d", code)
			}
			deadline = time.Now().Add(5*time.Second + 500*time.Millisecond)
			for chat(t, addr, secret) != http.StatusUnauthorized {
				if time.Now().After(deadline) {
					t.Fatal("the deleted key still works after 5 s")
				}
				time.Sleep(100 * time.Millisecond)
			}
			if code, _ := adminCall(t, addr, http.MethodGet, "/admin/v1/me", nil, "wrong"); code != http.StatusUnauthorized {
				t.Fatalf("a wrong admin token: %d", code)
			}
		})
	}
}
