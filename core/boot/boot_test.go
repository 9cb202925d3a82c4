package boot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fngate/fngate/core/config"
)

const catalog = "auth: none\nconnections: {mock: {kind: mock}}\nmodels: {from-file: {routes: [{connection: mock, model: echo}]}}\n"

// Without Root a relative FNGATE_CONFIG is the working directory's, named as given; without
// Packaged nothing but the variables and the default is looked at.
func TestLoadConfigWithoutPackageRoot(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("fngate.yaml", []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env        map[string]string
		wantSource string
		wantModel  string
	}{
		{map[string]string{EnvConfigPath: "./fngate.yaml"}, "./fngate.yaml", "from-file"},
		{nil, "embedded default", "mock/echo"},
	} {
		getenv := func(k string) string { return tc.env[k] }
		cfg, source, err := LoadConfig(context.Background(), getenv, Files{}, config.Options{Getenv: getenv})
		if err != nil || source != tc.wantSource || cfg.Models[tc.wantModel] == nil {
			t.Errorf("env %v: source %q, %v; want %q serving %s", tc.env, source, err, tc.wantSource, tc.wantModel)
		}
	}
}

func TestLoadConfigPackagedFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "fngate.yaml"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	cfg, source, err := LoadConfig(context.Background(), getenv, Files{Root: root, Packaged: "fngate.yaml"}, config.Options{Getenv: getenv})
	if err != nil || source != filepath.Join(root, "fngate.yaml") || cfg.Models["from-file"] == nil {
		t.Fatalf("source %q, %v", source, err)
	}
}

func TestCheckPublic(t *testing.T) {
	for _, tc := range []struct {
		cfg     config.Config
		wantErr bool
	}{
		{config.Config{}, true},
		{config.Config{Auth: "none"}, false},
		{config.Config{Keys: []config.Key{{Name: "a", Value: "k"}}}, false},
	} {
		err := CheckPublic(&tc.cfg, "the thing is public (WHY)", "make it private")
		if tc.wantErr != (err != nil) {
			t.Errorf("%+v: %v", tc.cfg, err)
		}
		if err != nil && err.Error() != "the thing is public (WHY) and the config has no client keys: add keys, write `auth: none` to serve openly on purpose, or make it private" {
			t.Errorf("message %q", err)
		}
	}
}
