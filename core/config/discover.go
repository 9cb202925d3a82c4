package config

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// discoverModels adds a gateway model for each model an OpenAI-compatible connection lists at
// GET {base_url}/models (Ollama, vLLM and SGLang all serve it). Configured models win on a
// name clash. A connection that cannot be listed is skipped: discovery is a convenience of
// the local default, never a reason to refuse to start.
func discoverModels(ctx context.Context, cfg *Config, client *http.Client) error {
	for name, c := range cfg.Connections {
		if c.Discover == nil {
			continue
		}
		if c.BaseURL == "" {
			return fmt.Errorf("connections.%s: discover needs base_url", name)
		}
		ids, err := listModels(ctx, client, c)
		if err != nil {
			continue
		}
		if cfg.Models == nil {
			cfg.Models = map[string]*Model{}
		}
		for _, id := range ids {
			gw := c.Discover.Prefix + id
			if _, taken := cfg.Models[gw]; taken {
				continue
			}
			cfg.Models[gw] = &Model{
				Name:        gw,
				Description: "discovered on connection " + name,
				Routes:      []Route{{Connection: name, Model: id}},
			}
		}
	}
	return nil
}

func listModels(ctx context.Context, client *http.Client, c *Connection) ([]string, error) {
	u, err := JoinURL(c.BaseURL, "/models")
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing models: status %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
