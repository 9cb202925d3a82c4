// Package schemafill builds a JSON value that a JSON Schema accepts, for the mock provider's
// structured answers and the fakes' (through mock.SchemaJSON; a deterministic stand-in for a
// model asked for response_format json_schema). It reads what SDK schema builders emit (zod,
// Pydantic, LangChain's converters): type (or a list of types), properties and required,
// items and minItems, enum, const, anyOf/oneOf/allOf, $ref into $defs or definitions, string
// formats, length and numeric bounds. Patterns are not honoured.
package schemafill

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// maxDepth bounds recursion through $ref and nesting: a recursive schema gets its shortest
// acceptable value (an empty list, an omitted optional member) below it.
const maxDepth = 12

// JSON returns a compact JSON text of a value schema accepts, with text as the value of
// every free string. An unreadable schema reads as {} (anything goes): the value is then
// {"text": text}.
func JSON(schema []byte, text string) string {
	var s map[string]any
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber()
	if d.Decode(&s) != nil || s == nil {
		s = map[string]any{}
	}
	f := filler{root: s, text: text}
	v := f.value(s, 0)
	if len(s) == 0 {
		v = map[string]any{"text": text}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

type filler struct {
	root map[string]any
	text string
}

func (f *filler) value(s map[string]any, depth int) any {
	if depth > maxDepth {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		if target := f.resolve(ref); target != nil {
			return f.value(target, depth+1)
		}
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range [...]string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				if as, ok := a.(map[string]any); ok && !nullOnly(as) {
					return f.value(as, depth+1)
				}
			}
			return nil
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		merged := map[string]any{}
		for _, a := range all {
			if as, ok := a.(map[string]any); ok {
				for k, v := range as {
					merged[k] = v
				}
			}
		}
		return f.value(merged, depth+1)
	}
	switch typeOf(s) {
	case "object":
		return f.object(s, depth)
	case "array":
		n := 0
		if m, ok := number(s["minItems"]); ok {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			out = append(out, f.value(items, depth+1))
		}
		return out
	case "integer":
		return int64(bounded(s, 1))
	case "number":
		return bounded(s, 1)
	case "boolean":
		return true
	case "null":
		return nil
	}
	return f.str(s)
}

func (f *filler) object(s map[string]any, depth int) any {
	props, _ := s["properties"].(map[string]any)
	out := make(map[string]any, len(props))
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if k, ok := r.(string); ok {
				required[k] = true
			}
		}
	}
	for _, k := range keys {
		ps, _ := props[k].(map[string]any)
		if depth >= maxDepth/2 && !required[k] {
			continue // deep in a recursive schema: leave what may be left out
		}
		out[k] = f.value(ps, depth+1)
	}
	return out
}

// str is a string the schema accepts: the text, or a sample of its format, within its
// length bounds.
func (f *filler) str(s map[string]any) string {
	v := f.text
	switch s["format"] {
	case "email":
		v = "user@example.com"
	case "uuid":
		v = "00000000-0000-4000-8000-000000000000"
	case "date-time":
		v = "2026-01-01T00:00:00Z"
	case "date":
		v = "2026-01-01"
	case "time":
		v = "00:00:00"
	case "uri", "url":
		v = "https://example.com/"
	}
	if m, ok := number(s["maxLength"]); ok && len([]rune(v)) > int(m) {
		v = string([]rune(v)[:int(m)])
	}
	if m, ok := number(s["minLength"]); ok {
		for len([]rune(v)) < int(m) {
			v += "x"
		}
	}
	return v
}

// resolve follows a local $ref (#/$defs/X, #/definitions/X, #).
func (f *filler) resolve(ref string) map[string]any {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	var cur any = f.root
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[seg]
	}
	m, _ := cur.(map[string]any)
	return m
}

// typeOf is the schema's type: the first non-null one of a list, else what its keywords
// imply.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if n, ok := e.(string); ok && n != "null" {
				return n
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return "string"
}

func nullOnly(s map[string]any) bool { return s["type"] == "null" }

// bounded is def moved within the schema's numeric bounds.
func bounded(s map[string]any, def float64) float64 {
	v := def
	if m, ok := number(s["minimum"]); ok && v < m {
		v = m
	}
	if m, ok := number(s["exclusiveMinimum"]); ok && v <= m {
		v = m + 1
	}
	if m, ok := number(s["maximum"]); ok && v > m {
		v = m
	}
	if m, ok := number(s["exclusiveMaximum"]); ok && v >= m {
		v = m - 1
	}
	return v
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
