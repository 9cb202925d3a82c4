package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/fngate/fngate/scripts/internal/proc"
)

// keysConfig is the gateway of the key comparison: a key in config, and a key store (memory:
// the store's own latency is not on the cached path this measures) where the admin API
// issues a second key with the same limits. Both keys are unlimited, so the difference is
// finding the key: the config's table against the store's cache.
const keysConfig = `
limits: {max_in_flight: 5000}
keys:
  - {name: config-key, value: bench-key-config}
key_store: {store: memory}
admin:
  keys: [{name: bench-admin, value: bench-admin-key, role: admin}]
connections:
  up: {kind: openai-compatible, base_url: "http://%s/v1"}
models:
  bench/openai:
    routes: [{connection: up, model: bench}]
`

// keys runs a gateway process with a config key and a stored key, issued through its admin
// API as a user would, and compares them: a stored key costs its cache look-up alone.
func (b *bench) keys(tmp, gwBin, upAddr string) error {
	if b.opt.only != nil && !b.opt.only.MatchString("keys") {
		return nil
	}
	addr := proc.FreeAddr()
	gw, err := proc.Start("gateway-keys", filepath.Join(tmp, "gateway-keys.log"), gwBin, "-config", writeConfig(tmp, "keys.yaml", fmt.Sprintf(keysConfig, upAddr)), "-addr", addr, "-route-state", "off")
	if err != nil {
		return err
	}
	defer gw.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := proc.WaitListening(ctx, addr); err != nil {
		return err
	}
	stored, err := issueKey(b.client, "http://"+addr)
	if err != nil {
		return err
	}
	ts := []target{{"direct", "http://" + upAddr, "bench", 0, chatWire, ""},
		{"fngate, key from config", "http://" + addr, "bench/openai", gw.Cmd.Process.Pid, chatWire, "bench-key-config"},
		{"fngate, key from the key store", "http://" + addr, "bench/openai", gw.Cmd.Process.Pid, chatWire, stored},
	}
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("keys from config vs the key store, non-stream, %d in flight", c), c, false, ts})
	}
	return nil
}

// issueKey creates a key with POST /admin/v1/keys and returns its secret.
func issueKey(client *http.Client, base string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/admin/v1/keys", strings.NewReader(`{"name":"bench-stored"}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer bench-admin-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var created struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusCreated || created.Key == "" {
		return "", fmt.Errorf("issuing a stored key: %s (%v)", resp.Status, err)
	}
	return created.Key, nil
}
