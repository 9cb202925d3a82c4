// Package boot holds what the platform entry points (the Lambda bootstrap, the Cloud
// Functions function) decide alike at start-up: where the config comes from, and that an
// endpoint anyone may invoke does not serve without client keys by accident. Each platform
// keeps its own rules around these (its invoker settings, its package layout). It lives
// under core/ because the Cloud Functions upload carries core/ and the function's own
// package only.
package boot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fngate/fngate/core/config"
)

// The variables that say where the config comes from; at most one may be set.
const (
	EnvConfigYAML = "FNGATE_CONFIG_YAML" // the YAML itself
	EnvConfigPath = "FNGATE_CONFIG"      // a config file
)

// Files says where a platform looks for config files.
type Files struct {
	// Root is where a relative FNGATE_CONFIG path starts; "" leaves it to the working
	// directory.
	Root string
	// Packaged, when set, names a config file under Root that is read, if it exists, when
	// neither variable is set.
	Packaged string
}

// LoadConfig reads FNGATE_CONFIG_YAML, else the file FNGATE_CONFIG, else the packaged file,
// else the embedded default, and says which for the start-up log line.
func LoadConfig(ctx context.Context, getenv func(string) string, files Files, opt config.Options) (*config.Config, string, error) {
	data, from, err := ReadConfig(getenv, files)
	if err != nil {
		return nil, "", err
	}
	cfg, err := config.Parse(ctx, data, opt)
	switch {
	case err == nil:
		return cfg, from, nil
	case from == EnvConfigYAML:
		return nil, "", fmt.Errorf("config from %s: %w", EnvConfigYAML, err)
	case from == embeddedDefault:
		return nil, "", fmt.Errorf("embedded default config: %w", err)
	}
	return nil, "", fmt.Errorf("config %s: %w", from, err)
}

const embeddedDefault = "embedded default"

// ReadConfig returns the config's YAML from where LoadConfig would take it, unparsed, and
// says where that is: for a function that reads a few fields of the gateway's config (the
// remediation functions' route inventory) without the gateway's secrets and environment.
func ReadConfig(getenv func(string) string, files Files) ([]byte, string, error) {
	inline, path := getenv(EnvConfigYAML), getenv(EnvConfigPath)
	switch {
	case inline != "" && path != "":
		return nil, "", fmt.Errorf("both %s and %s are set; set one", EnvConfigYAML, EnvConfigPath)
	case inline != "":
		return []byte(inline), EnvConfigYAML, nil
	case path != "":
		if files.Root != "" && !filepath.IsAbs(path) {
			path = filepath.Join(files.Root, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("config: %w", err)
		}
		return data, path, nil
	}
	if files.Packaged != "" {
		packaged := filepath.Join(files.Root, files.Packaged)
		data, err := os.ReadFile(packaged)
		if err == nil {
			return data, packaged, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("config: %w", err)
		}
	}
	return config.DefaultYAML(), embeddedDefault, nil
}

// CheckPublic refuses a config for a public endpoint that has no client keys, unless it says
// `auth: none`: serving openly must be a decision. public says what is public and why ("the
// function URL is public (AuthType NONE)"), private how to make it private instead.
func CheckPublic(cfg *config.Config, public, private string) error {
	if len(cfg.Keys) == 0 && !cfg.KeyStore.Named() && cfg.Auth != "none" {
		return fmt.Errorf("%s and the config has no client keys: add keys, write `auth: none` to serve openly on purpose, or %s", public, private)
	}
	return nil
}
