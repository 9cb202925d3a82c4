package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// expandNode replaces ${VAR} and ${VAR:-default} in scalar values (never in keys). Expansion
// happens on parsed scalars, not on the raw text, so a value with YAML-special characters
// cannot change the document's structure. $${ is a literal ${. Unset variables without a
// default are collected in missing by key path (a disabled connection may use them); a
// malformed reference (${VAR with no closing brace, ${}) is a mistake whatever the
// environment holds, so it goes to bad.
func expandNode(root *yaml.Node, getenv func(string) string, missing map[string][]string, bad *problems) {
	walk(root, "", func(path string, n *yaml.Node) {
		if n.Kind != yaml.ScalarNode || !strings.Contains(n.Value, "${") {
			return
		}
		v, unset, malformed := expand(n.Value, getenv)
		if malformed != "" {
			bad.add(path, ": %s (write $${ for a literal ${)", malformed)
			return
		}
		n.Value = v
		if len(unset) > 0 {
			missing[path] = append(missing[path], unset...)
		}
		// Let a plain scalar resolve again (${MAX_TOKENS} may be an int); a quoted one stays a string.
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
			n.Tag = ""
		}
	})
}

// expand substitutes variables in s and returns the names of unset ones without defaults, or
// why a reference in s is malformed.
func expand(s string, getenv func(string) string) (out string, unset []string, malformed string) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), unset, ""
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", nil, "a ${ reference has no closing }"
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if name == "" {
			return "", nil, "a ${} reference names no variable"
		}
		if v := getenv(name); v != "" {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			unset = append(unset, name)
		}
		s = s[i+end+1:]
	}
}

// ExpandEnv substitutes ${VAR} and ${VAR:-default} in one value as Parse does, for tools
// that read a few fields of a config without loading it (the remediation functions' route
// inventory). An unset variable without a default, or a malformed reference, is an error.
func ExpandEnv(s string, getenv func(string) string) (string, error) {
	out, unset, malformed := expand(s, getenv)
	switch {
	case malformed != "":
		return "", errors.New(malformed)
	case len(unset) > 0:
		return "", fmt.Errorf("${%s} is not set", strings.Join(unset, "}, ${"))
	}
	return out, nil
}
