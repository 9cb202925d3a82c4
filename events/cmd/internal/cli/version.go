package cli

import (
	"runtime"
	"runtime/debug"
)

// versionInfo is what fngate version prints: the module's version as the build recorded it
// (go install ...@v1.2.3), the commit it was built from, and the toolchain.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (o *op) version(args []string) error {
	fs := o.flags("version")
	if _, err := o.parse(fs, args, 0, "version [-json]"); err != nil {
		return err
	}
	v := buildVersion()
	if o.json {
		return printJSON(o.env.Stdout, v)
	}
	line := "fngate " + v.Version
	if v.Commit != "" {
		line += " (" + v.Commit
		if v.Modified {
			line += ", modified"
		}
		line += ")"
	}
	_, err := o.env.Stdout.Write([]byte(line + " " + v.Go + "\n"))
	return err
}
