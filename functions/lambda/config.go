package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fngate/fngate/core/config"
)

// Where the config comes from, first match wins:
//
//  1. FNGATE_CONFIG_YAML: the YAML itself, set from the template. Lambda caps all variables
//     together at 4 KB, so this suits small catalogs.
//  2. FNGATE_CONFIG: a file path; relative paths start at the deployment package root.
//  3. fngate.yaml in the deployment package root (`make package CONFIG=...` puts it there).
//  4. The embedded default catalog (mock models, providers found in the environment).
//
// Secrets never belong in either form: write aws-sm:// references or ${ENV} instead.
const (
	envConfigYAML  = "FNGATE_CONFIG_YAML"
	envConfigPath  = "FNGATE_CONFIG"
	packagedConfig = "fngate.yaml"
)

// loadConfig returns the config and a description of where it came from, for the start-up
// log line.
func loadConfig(ctx context.Context, getenv func(string) string, packageRoot string, opt config.Options) (*config.Config, string, error) {
	inline, path := getenv(envConfigYAML), getenv(envConfigPath)
	switch {
	case inline != "" && path != "":
		return nil, "", fmt.Errorf("both %s and %s are set; set one", envConfigYAML, envConfigPath)
	case inline != "":
		cfg, err := config.Parse(ctx, []byte(inline), opt)
		if err != nil {
			return nil, "", fmt.Errorf("config from %s: %w", envConfigYAML, err)
		}
		return cfg, envConfigYAML, nil
	case path != "":
		if !filepath.IsAbs(path) {
			path = filepath.Join(packageRoot, path)
		}
		cfg, err := config.Load(ctx, path, opt)
		return cfg, path, err
	}
	packaged := filepath.Join(packageRoot, packagedConfig)
	if _, err := os.Stat(packaged); err == nil {
		cfg, err := config.Load(ctx, packaged, opt)
		return cfg, packaged, err
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, "", fmt.Errorf("config: %w", err)
	}
	cfg, err := config.Default(ctx, opt)
	return cfg, "embedded default", err
}

// packageRoot is the directory holding the bootstrap: /var/task on Lambda.
func packageRoot() string {
	if exe, err := os.Executable(); err == nil {
		return filepath.Dir(exe)
	}
	return "."
}
