package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fngate/fngate/core/boot"
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
	envConfigYAML  = boot.EnvConfigYAML
	envConfigPath  = boot.EnvConfigPath
	packagedConfig = "fngate.yaml"
)

// loadConfig returns the config and a description of where it came from, for the start-up
// log line.
func loadConfig(ctx context.Context, getenv func(string) string, packageRoot string, opt config.Options) (*config.Config, string, error) {
	return boot.LoadConfig(ctx, getenv, boot.Files{Root: packageRoot, Packaged: packagedConfig}, opt)
}

// packageRoot is the directory holding the bootstrap: /var/task on Lambda.
func packageRoot() string {
	if exe, err := os.Executable(); err == nil {
		return filepath.Dir(exe)
	}
	return "."
}
