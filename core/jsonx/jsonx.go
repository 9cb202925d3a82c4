// Package jsonx walks JSON that is already known to be valid (json.Valid), member by member,
// without decoding what the caller does not ask for. Front doors use it to decode exactly:
// keys match case-sensitively, a repeated key is an error, and each value is handed over as
// raw bytes to decode into its own type or keep verbatim.
//
// Nothing here recurses: skipping a value counts brackets, so depth costs no stack.
package jsonx

import (
	"encoding/json"
	"errors"
)

// ErrDuplicate is returned by Members when an object repeats a key; the key is in the
// DuplicateError.
var ErrDuplicate = errors.New("jsonx: duplicate key")

// DuplicateError names a key that appears twice in one object.
type DuplicateError struct{ Key string }

func (e *DuplicateError) Error() string { return "duplicate key " + e.Key }
func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// Kind is the kind of a JSON value, from its first byte.
type Kind byte

const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// KindOf returns the kind of the value v (leading whitespace allowed).
func KindOf(v []byte) Kind {
	v = trim(v)
	if len(v) == 0 {
		return Invalid
	}
	switch c := v[0]; {
	case c == 'n':
		return Null
	case c == 't' || c == 'f':
		return Bool
	case c == '"':
		return String
	case c == '[':
		return Array
	case c == '{':
		return Object
	case c == '-' || c >= '0' && c <= '9':
		return Number
	}
	return Invalid
}

// Members calls fn for each member of the object obj in order, with the key unquoted and the
// value's raw bytes. It returns a *DuplicateError for a repeated key, fn's first error, or an
// error when obj is not an object. obj must be valid JSON.
func Members(obj []byte, fn func(key string, value []byte) error) error {
	obj = trim(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return errors.New("not an object")
	}
	i := skipSpace(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	var seen []string // objects here have a few dozen keys: a slice beats a map
	for i < len(obj) {
		end := skipString(obj, i)
		key, err := unquote(obj[i:end])
		if err != nil {
			return err
		}
		for _, k := range seen {
			if k == key {
				return &DuplicateError{Key: key}
			}
		}
		seen = append(seen, key)
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		vend := skipValue(obj, i)
		if err := fn(key, obj[i:vend]); err != nil {
			return err
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		i = skipSpace(obj, i+1) // the comma
	}
	return nil
}

// RawMembers is Members for a caller that copies members through: fn gets each key as it
// is written, quotes and escapes included, and repeated keys are not looked for.
func RawMembers(obj []byte, fn func(key, value []byte) error) error {
	obj = trim(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return errors.New("not an object")
	}
	i := skipSpace(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		end := skipString(obj, i)
		key := obj[i:end]
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		vend := skipValue(obj, i)
		if err := fn(key, obj[i:vend]); err != nil {
			return err
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		i = skipSpace(obj, i+1) // the comma
	}
	return nil
}

// Elements calls fn for each element of the array arr in order. arr must be valid JSON.
func Elements(arr []byte, fn func(i int, value []byte) error) error {
	arr = trim(arr)
	if len(arr) == 0 || arr[0] != '[' {
		return errors.New("not an array")
	}
	i := skipSpace(arr, 1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for n := 0; i < len(arr); n++ {
		end := skipValue(arr, i)
		if err := fn(n, arr[i:end]); err != nil {
			return err
		}
		i = skipSpace(arr, end)
		if i >= len(arr) || arr[i] == ']' {
			return nil
		}
		i = skipSpace(arr, i+1)
	}
	return nil
}

// Count returns the number of elements of the array arr (valid JSON), or -1 when arr is not
// an array.
func Count(arr []byte) int {
	n := 0
	if Elements(arr, func(int, []byte) error { n++; return nil }) != nil {
		return -1
	}
	return n
}

// Depth returns the deepest nesting of arrays and objects in v (valid JSON): 0 for a scalar.
func Depth(v []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			i = skipString(v, i) - 1
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// unquote decodes a key. Keys are nearly always plain ASCII; escapes and any other byte go
// through encoding/json, which also turns invalid UTF-8 into U+FFFD as it does for values.
func unquote(s []byte) (string, error) {
	for _, c := range s[1 : len(s)-1] {
		if c == '\\' || c >= 0x80 {
			var out string
			err := json.Unmarshal(s, &out)
			return out, err
		}
	}
	return string(s[1 : len(s)-1]), nil
}

// skipValue returns the index just past the value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the string starting at i (b[i] is the quote).
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func trim(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}
