package config

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// expandNode replaces ${VAR} and ${VAR:-default} in scalar values (never in keys). Expansion
// happens on parsed scalars, not on the raw text, so a value with YAML-special characters
// cannot change the document's structure. $${ is a literal ${.
func expandNode(n *yaml.Node, path string, getenv func(string) string, missing map[string][]string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			p := key
			if path != "" {
				p = path + "." + key
			}
			expandNode(n.Content[i+1], p, getenv, missing)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			expandNode(c, path, getenv, missing)
		}
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "${") {
			var unset []string
			n.Value, unset = expand(n.Value, getenv)
			if len(unset) > 0 {
				missing[path] = append(missing[path], unset...)
			}
			// Let a plain scalar resolve again (${MAX_TOKENS} may be an int); a quoted one stays a string.
			if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
				n.Tag = ""
			}
		}
	}
}

// expand substitutes variables in s and returns the names of unset ones without defaults.
func expand(s string, getenv func(string) string) (string, []string) {
	var b strings.Builder
	var unset []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), unset
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			b.WriteString(s)
			return b.String(), unset
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
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
