package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/fngate/fngate/core/llm"
)

// checkKeys refuses what encoding/json would quietly accept in the object keys of body: a key
// that differs from a field name only by case ("MODEL" decodes into model, and "max_tokİns"
// into max_tokens), and a key repeated in one object (the last value wins). A proxy or WAF in
// front of the gateway reads either differently, so the gateway would act on a request other
// than the one that was inspected. Case is checked where keys name struct fields; repetition
// everywhere, tool schemas and metadata included.
//
// It runs after the typed decode succeeded (or after a generic decode, when diagnosing one that
// failed), so body is well-formed JSON no deeper than encoding/json's nesting limit, and one
// pass over the bytes suffices: it allocates only for keys with escapes or for objects of many
// keys.
//
// at is the path of body within the request ("" for the request itself), for the param of the
// refusal.
func checkKeys(body []byte, t reflect.Type, at string) *llm.Error {
	s := keyScanner{b: body}
	if e := s.value(keysOf(t)); e != nil {
		if at != "" {
			e.path = append(e.path, "."+at)
		}
		return e.toError()
	}
	return nil
}

// CheckDuplicateKeys refuses a key repeated in any object of body, at any depth, as a 400
// duplicate_parameter naming its path in OpenAI's notation (input[3].content[0].text). It is
// the check checkKeys makes where keys are free, for doors that match field names exactly
// themselves (the Responses door) and so need no case check. body must be valid JSON.
func CheckDuplicateKeys(body []byte) *llm.Error {
	s := keyScanner{b: body}
	if e := s.value(nil); e != nil {
		return e.toError()
	}
	return nil
}

// keyNode is what a position in a request holds, as far as its keys are concerned. A struct
// has fields (its exact JSON names); a slice or map has elem; anything else (raw JSON, a
// scalar, a type that decodes itself) is nil, and its keys are free.
type keyNode struct {
	fields map[string]*keyNode
	folded map[string]string // encoding/json's folded name -> the exact name
	elem   *keyNode
}

var keyNodes sync.Map // reflect.Type -> *keyNode

func keysOf(t reflect.Type) *keyNode {
	if n, ok := keyNodes.Load(t); ok {
		return n.(*keyNode)
	}
	n := buildKeyNode(t, map[reflect.Type]*keyNode{})
	keyNodes.Store(t, n)
	return n
}

func buildKeyNode(t reflect.Type, building map[reflect.Type]*keyNode) *keyNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // ToolChoice checks its own keys (see UnmarshalJSON)
	}
	if n, ok := building[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		n := &keyNode{}
		building[t] = n
		n.elem = buildKeyNode(t.Elem(), building)
		return n
	case reflect.Struct:
		n := &keyNode{fields: map[string]*keyNode{}, folded: map[string]string{}}
		building[t] = n
		addFields(n, t, building)
		return n
	}
	return nil
}

// addFields adds t's JSON fields to n, promoting those of embedded structs as encoding/json
// does.
func addFields(n *keyNode, t reflect.Type, building map[reflect.Type]*keyNode) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(n, ft, building)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		n.fields[tag] = buildKeyNode(f.Type, building)
		n.folded[foldName(tag)] = tag
	}
}

// foldName is encoding/json's case folding of a field name (appendFoldedName in its fold.go):
// ASCII upper-cased, any other rune mapped to the upper case of its lower case. That mapping,
// not strings.EqualFold, says which keys the typed decoder matched to a field: it takes "İ"
// for "i", which EqualFold does not.
func foldName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
	}
	return b.String()
}

// keyError is a refused key; path is collected innermost first while the scan unwinds, as
// ".key" and "[index]" segments.
type keyError struct {
	key   string // as sent (decoded)
	field string // for a case mismatch: the field it would have set
	path  []string
}

func (e *keyError) toError() *llm.Error {
	var p strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		p.WriteString(e.path[i])
	}
	param := strings.TrimPrefix(p.String(), ".")
	if e.field != "" {
		return &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Param: param, Code: "unknown_parameter",
			Message: "Unrecognized request argument supplied: " + param + " (keys are case-sensitive: did you mean " + quote(e.field) + "?)"}
	}
	where := "in the request body"
	if parent := strings.TrimSuffix(param, e.key); parent != "" {
		where = "in " + strings.TrimSuffix(parent, ".")
	}
	return &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Param: param, Code: "duplicate_parameter",
		Message: "The key " + quote(e.key) + " appears more than once " + where + ": send each key once (parsers disagree on which value a repeated key keeps)."}
}

// manyKeys is where an object's duplicate check switches from comparing with every earlier key
// to a set, so a schema of thousands of properties costs no more than linear time.
const manyKeys = 16

type keyScanner struct {
	b []byte
	i int
	// seen[:n] are the keys (as spans of b) of the objects being scanned, outermost first: a
	// fixed array of spans rather than a slice of slices, so a scan allocates nothing. An
	// object whose keys do not fit uses a set instead.
	seen [64]span
	n    int
}

type span struct{ lo, hi int }

func (s *keyScanner) value(n *keyNode) *keyError {
	s.space()
	if s.i >= len(s.b) {
		return nil
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		base := s.n
		e := s.members(n, base)
		s.n = base
		return e
	case '[':
		s.i++
		var elem *keyNode
		if n != nil {
			elem = n.elem
		}
		for idx := 0; ; idx++ {
			if !s.next(']') {
				return nil
			}
			if e := s.value(elem); e != nil {
				e.path = append(e.path, "["+strconv.Itoa(idx)+"]")
				return e
			}
		}
	case '"':
		s.str(false)
	default:
		start := s.i
		for s.i < len(s.b) && !isDelim(s.b[s.i]) {
			s.i++
		}
		if s.i == start { // a stray delimiter, in a body that is not JSON: step over it
			s.i++
		}
	}
	return nil
}

// next moves past the comma before the next member or element and reports whether there is
// one; at the closing byte it moves past that and reports false.
func (s *keyScanner) next(closing byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ',' {
		s.i++
		s.space()
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == closing {
		s.i++
		return false
	}
	return true
}

// members scans an object's members; the keys from seen[base] on are this object's.
func (s *keyScanner) members(n *keyNode, base int) *keyError {
	var set map[string]struct{} // instead of seen, once the object has many keys or odd ones
	for s.next('}') {
		key, at, plain := s.key()
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ':' {
			s.i++
		}
		if set == nil && (!plain || s.n-base == manyKeys || s.n == len(s.seen)) {
			set = make(map[string]struct{}, 2*manyKeys)
			for _, sp := range s.seen[base:s.n] {
				set[string(s.b[sp.lo:sp.hi])] = struct{}{}
			}
		}
		dup := false
		if set != nil {
			_, dup = set[string(key)]
			set[string(key)] = struct{}{}
		} else {
			for _, sp := range s.seen[base:s.n] {
				dup = dup || bytes.Equal(s.b[sp.lo:sp.hi], key)
			}
			s.seen[s.n] = at
			s.n++
		}
		if dup {
			return &keyError{key: string(key), path: []string{"." + string(key)}}
		}
		var child *keyNode
		if n != nil {
			child = n.elem
			if n.fields != nil {
				f, exact := n.fields[string(key)]
				if !exact {
					if name, folds := n.folded[foldName(string(key))]; folds {
						return &keyError{key: string(key), field: name, path: []string{"." + string(key)}}
					}
					// Unknown: the diagnosis that follows names it.
				}
				child = f
			}
		}
		if e := s.value(child); e != nil {
			e.path = append(e.path, "."+string(key))
			return e
		}
	}
	return nil
}

// key reads an object key and returns its decoded bytes with their span in b. When plain is
// false the key held escapes or bytes that are not UTF-8, which encoding/json decodes (invalid
// UTF-8 to U+FFFD), and key is that decoded copy, so two spellings of one key compare equal.
func (s *keyScanner) key() (key []byte, at span, plain bool) {
	start := s.i
	plain = s.str(true)
	raw := s.b[start:s.i]
	if len(raw) < 2 {
		return nil, span{start, start}, false
	}
	if plain {
		return raw[1 : len(raw)-1], span{start + 1, s.i - 1}, true
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return raw, span{start, s.i}, false
	}
	return []byte(k), span{start, s.i}, false
}

// str skips a string starting at its opening quote. For a key (check) it reports whether the
// bytes are its value: no escapes, no bytes that are not UTF-8. It jumps from quote to quote,
// as most of a request is string values.
func (s *keyScanner) str(check bool) (plain bool) {
	s.i++ // "
	start := s.i
	plain = true
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			s.i = len(s.b)
			return false
		}
		end := s.i + j
		k := end
		for k > s.i && s.b[k-1] == '\\' {
			k--
		}
		s.i = end + 1
		if (end-k)%2 == 0 { // not itself escaped: the closing quote
			v := s.b[start:end]
			return check && plain && bytes.IndexByte(v, '\\') < 0 && (isASCII(v) || utf8.Valid(v))
		}
		plain = false
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (s *keyScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
