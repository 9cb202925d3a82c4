// Command gcfsource assembles the source uploads for Cloud Functions gen2: the gateway
// (make package-gcf), the remediation function (make package-gcf-remediation) and the control
// plane (make package-gcf-controlplane).
//
//	go run ./functions/gcf/gcfsource -out build/gcf-source.zip
//	go run ./functions/gcf/gcfsource -function remediation -out build/gcf-remediation-source.zip
//	go run ./functions/gcf/gcfsource -function controlplane -out build/gcf-controlplane-source.zip
//
// The Go buildpack that builds functions looks only at the upload's root: it parses the one
// package there, blank-imports it from a generated main, and ignores GOOGLE_FUNCTION_SOURCE
// (only the Python, Ruby and PHP buildpacks read it). fngate's functions live in packages
// of a module whose root has no package, so an upload is a small wrapper module instead: a
// root package that imports the function's package (whose init registers it), and this
// module beside it under fngate/, wired in with a replace directive.
//
//	go.mod        module fngate.local/function, requires fngate and the functions framework
//	go.sum        fngate's, so the buildpack's `go mod tidy` only confirms it
//	function.go   package function: imports the framework and the function's package
//	fngate/       go.mod, go.sum, core/ and the function's packages (no tests, no other mains)
package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

const (
	// Module is the wrapper module's path; the buildpack wants a dot in its first element.
	Module    = "fngate.local/function"
	fngateMod = "github.com/fngate/fngate"
	ffMod     = "github.com/GoogleCloudPlatform/functions-framework-go"
)

// Function is one deployable function: the package whose init registers it, and the
// directories of fngate its build needs.
type Function struct {
	Name       string
	EntryPoint string   // what init registers: the deploy's entry point
	Package    string   // imported by the upload's root package
	Dirs       []string // copied under fngate/, minus tests, testdata and Skip
	Skip       []string // other mains inside Dirs
}

// Functions are the uploads this command builds.
var Functions = map[string]Function{
	"gateway": {
		Name:       "gateway",
		EntryPoint: "Gateway",
		Package:    fngateMod + "/functions/gcf",
		Dirs:       []string{"core", "functions/gcf"},
		Skip:       []string{"functions/gcf/cmd", "functions/gcf/gcfsource"},
	},
	"remediation": {
		Name:       "remediation",
		EntryPoint: "FngateRemediate",
		Package:    fngateMod + "/events/eventarc",
		Dirs:       []string{"core", "events/remediation", "events/eventarc"},
		Skip:       []string{"events/eventarc/cmd"},
	},
	// The admin API and the console: a function of its own, so the gateway's upload (and
	// build, and cold start) carries none of it.
	"controlplane": {
		Name:       "controlplane",
		EntryPoint: "ControlPlane",
		Package:    fngateMod + "/functions/controlplane/gcf",
		Dirs:       []string{"core", "functions/controlplane/gcf"},
		Skip:       []string{"functions/controlplane/gcf/cmd"},
	},
}

// shim is the root package: importing the function's package registers the function, and
// importing the framework's functions package makes the buildpack generate the main for
// declaratively registered functions.
func shim(fn Function) []byte {
	return fmt.Appendf(nil, `// Package function is the root package Cloud Functions builds: importing %s
// registers the %s function, and importing the framework's functions package makes the
// buildpack generate the main for declaratively registered functions.
package function

import (
	_ "github.com/GoogleCloudPlatform/functions-framework-go/functions"

	_ %q
)
`, strings.TrimPrefix(fn.Package, fngateMod+"/"), fn.EntryPoint, fn.Package)
}

func main() {
	out := flag.String("out", "build/gcf-source.zip", "the zip to write")
	root := flag.String("root", ".", "fngate's module root")
	name := flag.String("function", "gateway", "which function: gateway, remediation or controlplane")
	flag.Parse()
	fn, ok := Functions[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "gcfsource: -function %q: want gateway, remediation or controlplane\n", *name)
		os.Exit(2)
	}
	files, err := Files(*root, fn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gcfsource:", err)
		os.Exit(1)
	}
	if err := writeZip(*out, files); err != nil {
		fmt.Fprintln(os.Stderr, "gcfsource:", err)
		os.Exit(1)
	}
}

// Files returns fn's upload as slash-separated path -> content.
func Files(root string, fn Function) (map[string][]byte, error) {
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(goMod, []byte("module "+fngateMod+"\n")) {
		return nil, fmt.Errorf("%s is not fngate's module root", root)
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, err
	}
	goLine, ffVersion, err := moduleFacts(goMod)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"go.mod": fmt.Appendf(nil, "module %s\n\ngo %s\n\nrequire (\n\t%s %s\n\t%s v0.0.0\n)\n\nreplace %s => ./fngate\n",
			Module, goLine, ffMod, ffVersion, fngateMod, fngateMod),
		"go.sum":        goSum,
		"function.go":   shim(fn),
		"fngate/go.mod": goMod,
		"fngate/go.sum": goSum,
	}
	for _, dir := range fn.Dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				// Other mains (the local runner, this command) and test data stay home.
				if d.Name() == "testdata" || slices.Contains(fn.Skip, rel) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(rel, "_test.go") || !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files["fngate/"+rel] = b
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// moduleFacts reads the go line and the functions framework version from fngate's go.mod,
// so the wrapper builds with exactly what fngate is tested with.
func moduleFacts(goMod []byte) (goLine, ffVersion string, err error) {
	f, err := modfile.ParseLax("go.mod", goMod, nil)
	if err != nil {
		return "", "", err
	}
	if f.Go == nil {
		return "", "", errors.New("go.mod has no go line")
	}
	for _, r := range f.Require {
		if r.Mod.Path == ffMod {
			return f.Go.Version, r.Mod.Version, nil
		}
	}
	return "", "", errors.New("go.mod does not require " + ffMod)
}

// writeZip writes files with a fixed timestamp and order, so an unchanged source gives an
// identical zip and Terraform sees no change.
func writeZip(out string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	stamp := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: path.Clean(n), Method: zip.Deflate, Modified: stamp})
		if err != nil {
			return err
		}
		if _, err := w.Write(files[n]); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
