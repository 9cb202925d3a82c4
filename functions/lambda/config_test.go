package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

func catalog(model string) string {
	return "auth: none\nconnections: {mock: {kind: mock}}\nmodels: {" + model + ": {routes: [{connection: mock, model: echo}]}}\n"
}

func TestConfigSources(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "other.yaml"), []byte(catalog("from-path")), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(t.TempDir(), "abs.yaml")
	if err := os.WriteFile(abs, []byte(catalog("from-abs")), 0o644); err != nil {
		t.Fatal(err)
	}
	withPackaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(withPackaged, packagedConfig), []byte(catalog("from-package")), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name       string
		env        map[string]string
		root       string
		wantModel  string
		wantSource string
		wantErr    string
	}{
		{name: "inline", env: map[string]string{envConfigYAML: catalog("inline")}, root: withPackaged, wantModel: "inline", wantSource: envConfigYAML},
		{name: "relative path starts at the package root", env: map[string]string{envConfigPath: "other.yaml"}, root: root, wantModel: "from-path"},
		{name: "absolute path", env: map[string]string{envConfigPath: abs}, root: root, wantModel: "from-abs"},
		{name: "packaged file", root: withPackaged, wantModel: "from-package"},
		{name: "embedded default", root: root, wantModel: "mock/echo", wantSource: "embedded default"},
		{name: "both set", env: map[string]string{envConfigYAML: "x", envConfigPath: "y"}, root: root, wantErr: "set one"},
		{name: "missing file", env: map[string]string{envConfigPath: "nope.yaml"}, root: root, wantErr: "nope.yaml"},
		{name: "broken inline", env: map[string]string{envConfigYAML: "models: ["}, root: root, wantErr: envConfigYAML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			cfg, source, err := loadConfig(context.Background(), getenv, tc.root, config.Options{Getenv: getenv})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Models[tc.wantModel] == nil {
				t.Errorf("loaded models %v, want %s", keys(cfg.Models), tc.wantModel)
			}
			if tc.wantSource != "" && source != tc.wantSource {
				t.Errorf("source = %q, want %q", source, tc.wantSource)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
