package config

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default catalog, for display and tests.
func DefaultYAML() []byte { return bytes.Clone(defaultYAML) }

// SecretResolver resolves one secret reference such as aws-sm://name#key.
type SecretResolver interface {
	Resolve(ctx context.Context, ref string) (string, error)
}

// Options are the loader's dependencies.
type Options struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Secrets maps a reference scheme ("aws-sm", "gcp-sm") to its resolver. A reference with
	// no resolver is an error, never passed on as a literal key.
	Secrets map[string]SecretResolver
	// HTTPClient serves enabled_if.reachable and discover; nil means a client with a short
	// timeout.
	HTTPClient *http.Client
	// WithoutMCP leaves the secret references of mcp_servers unresolved: the control plane
	// loads the gateway's config but serves no /mcp, and holds no grant on those secrets.
	WithoutMCP bool
}

func (o *Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

// Load reads and parses a config file.
func Load(ctx context.Context, path string, opt Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(ctx, data, opt)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Default parses the embedded default catalog.
func Default(ctx context.Context, opt Options) (*Config, error) {
	cfg, err := Parse(ctx, defaultYAML, opt)
	if err != nil {
		return nil, fmt.Errorf("embedded default config: %w", err)
	}
	return cfg, nil
}

// Parse builds a validated Config from YAML.
func Parse(ctx context.Context, data []byte, opt Options) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return nil, errors.New("the file is empty")
	}
	doc := root.Content[0]
	where := locate(doc)
	missing := map[string][]string{} // path -> unset variables
	malformed := &problems{where: where}
	expandNode(doc, opt.getenv, missing, malformed)
	if err := malformed.err(); err != nil {
		return nil, err
	}

	cfg := &Config{where: where}
	if err := doc.Decode(cfg); err != nil {
		return nil, where.nameNode(err)
	}
	for name, c := range cfg.Connections {
		if c == nil {
			return nil, fmt.Errorf("connections.%s: empty connection", name)
		}
		c.Name = name
	}
	for name, m := range cfg.Models {
		if m == nil {
			return nil, fmt.Errorf("models.%s: empty model", name)
		}
		m.Name = name
	}

	client := opt.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 500 * time.Millisecond}
	}
	disabled := disableConnections(ctx, cfg, &opt, client)
	if err := reportMissing(missing, disabled, where); err != nil {
		return nil, err
	}
	if err := resolveSecrets(ctx, cfg, &opt, disabled); err != nil {
		return nil, err
	}
	if err := discoverModels(ctx, cfg, client); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// disableConnections drops connections whose enabled_if fails, with their routes, and models
// left without a route because of it.
func disableConnections(ctx context.Context, cfg *Config, opt *Options, client *http.Client) map[string]bool {
	disabled := map[string]bool{}
	for name, c := range cfg.Connections {
		if c.EnabledIf != nil && !c.EnabledIf.holds(ctx, opt, client) {
			disabled[name] = true
			delete(cfg.Connections, name)
		}
	}
	if len(disabled) == 0 {
		return disabled
	}
	for name, m := range cfg.Models {
		if len(m.Routes) == 0 {
			continue // reported by validate
		}
		kept := m.Routes[:0]
		for _, r := range m.Routes {
			if !disabled[r.Connection] {
				kept = append(kept, r)
			}
		}
		m.Routes = kept
		if len(kept) == 0 {
			delete(cfg.Models, name)
		}
	}
	return disabled
}

func (c *Condition) holds(ctx context.Context, opt *Options, client *http.Client) bool {
	if c.Env != "" && opt.getenv(c.Env) == "" {
		return false
	}
	if c.Reachable != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Reachable, nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
	}
	return true
}

func reportMissing(missing map[string][]string, disabled map[string]bool, where *located) error {
	bad := &problems{where: where}
	for path, vars := range missing {
		if conn, ok := strings.CutPrefix(path, "connections."); ok {
			name, _, _ := strings.Cut(conn, ".")
			if disabled[name] {
				continue
			}
		}
		bad.add(path, " uses ${%s}, which is not set (write ${%s:-default} to allow that)", vars[0], vars[0])
	}
	return bad.err()
}
