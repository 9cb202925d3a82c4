package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `make run` (scripts/run-local.sh) says what a first build downloads before it starts, and
// leaves Vertex AI out when it would only cost a download. Run here with an empty module cache
// and no proxy, so the build itself fails at once: what is under test is what it says first.
func TestMakeRunExplainsTheFirstRun(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "run-local.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		env      []string
		code     int
		want     []string
		dontWant string
	}{
		"fresh machine": {nil, 1, []string{
			"Vertex AI provider left out: GOOGLE_CLOUD_PROJECT is unset",
			"first run: downloading the modules the local server needs (about 23 MB)",
			"nothing is wrong while they scroll",
		}, "680 MB"},
		"fresh machine with a Google Cloud project": {[]string{"GOOGLE_CLOUD_PROJECT=acme"}, 1, []string{
			"first run: downloading the modules the local server needs (about 680 MB",
		}, "left out"},
		"VERTEX=0":     {[]string{"VERTEX=0", "GOOGLE_CLOUD_PROJECT=acme"}, 1, []string{"Vertex AI provider left out (VERTEX=0)", "(about 23 MB)"}, ""},
		"VERTEX=maybe": {[]string{"VERTEX=maybe"}, 2, []string{"VERTEX=maybe: use auto (the default), 1 or 0"}, "first run"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("bash", script)
			var env []string
			for _, kv := range os.Environ() {
				if k, _, _ := strings.Cut(kv, "="); k != "GOOGLE_CLOUD_PROJECT" && k != "VERTEX" && k != "GOFLAGS" {
					env = append(env, kv)
				}
			}
			cmd.Env = append(env, "GOMODCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod", "BUILD_DIR="+t.TempDir())
			cmd.Env = append(cmd.Env, c.env...)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("make run does not say %q:\n%s", w, out)
				}
			}
			if c.dontWant != "" && strings.Contains(string(out), c.dontWant) {
				t.Errorf("make run says %q:\n%s", c.dontWant, out)
			}
		})
	}
}

// -tags novertex drops the Vertex AI SDK from the local server's build (what saves a first
// run its download), and only that: without the tag every provider is still built in.
func TestNoVertexTagDropsTheVertexSDK(t *testing.T) {
	deps := func(tags string) string {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, "-f", "{{with .Module}}{{.Path}}{{end}}", ".").Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		return string(out)
	}
	vertexSDK := []string{"cloud.google.com/go/aiplatform", "google.golang.org/api", "google.golang.org/grpc"}
	full, lite := deps(""), deps("novertex")
	for _, m := range vertexSDK {
		if !strings.Contains(full, m+"\n") {
			t.Errorf("the default build lacks %s: the Vertex AI provider is not built in", m)
		}
		if strings.Contains(lite, m+"\n") {
			t.Errorf("-tags novertex still needs %s", m)
		}
	}
	for _, m := range []string{"github.com/aws/aws-sdk-go-v2", "go.yaml.in/yaml/v3"} {
		if !strings.Contains(lite, m+"\n") {
			t.Errorf("-tags novertex lacks %s", m)
		}
	}
}
