package responses

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// The refusals below are worded as OpenAI's Responses API words them, with its codes, so a
// client's error handling reads the gateway's the same way.

// fieldError carries an *llm.Error through jsonx callbacks.
type fieldError struct{ e *llm.Error }

func (f *fieldError) Error() string { return f.e.Message }

func fail(e *llm.Error) error { return &fieldError{e} }

func asError(err error) *llm.Error {
	if err == nil {
		return nil
	}
	if fe, ok := err.(*fieldError); ok {
		return fe.e
	}
	return llm.BadRequest("", err.Error())
}

func bad(param, code, msg string) *llm.Error {
	return &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Param: param, Code: code, Message: msg}
}

// unknownParam is a key OpenAI does not define there. One that matches a field but for its
// case says so: keys are case-sensitive.
func unknownParam(param, key string, known ...string) error {
	msg := "Unknown parameter: '" + param + "'."
	for _, k := range known {
		if strings.EqualFold(k, key) {
			msg += " (Keys are case-sensitive: did you mean '" + k + "'?)"
			break
		}
	}
	return fail(bad(param, "unknown_parameter", msg))
}

func missing(param string) error {
	return fail(bad(param, "missing_required_parameter", "Missing required parameter: '"+param+"'."))
}

func invalidType(param, want string, v []byte) error {
	return fail(bad(param, "invalid_type", "Invalid type for '"+param+"': expected "+want+", but got "+kindName(v)+" instead."))
}

func invalidValue(param, got string, supported ...string) error {
	var b strings.Builder
	b.WriteString("Invalid value: '" + got + "'. Supported values are: ")
	for i, s := range supported {
		switch {
		case i > 0 && i == len(supported)-1:
			b.WriteString(", and ")
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString("'" + s + "'")
	}
	b.WriteString(".")
	return fail(bad(param, "invalid_value", b.String()))
}

func invalid(param, msg string) error { return fail(bad(param, "invalid_value", msg)) }

// only records what of the request only OpenAI's Responses API can honour.
func only(param, msg string) *llm.Error {
	return llm.Unsupported(param, msg+"; it is served only on routes to OpenAI itself (connection kind openai)")
}

func kindName(v []byte) string {
	switch jsonx.KindOf(v) {
	case jsonx.Null:
		return "null"
	case jsonx.Bool:
		return "a boolean"
	case jsonx.Number:
		return "a number"
	case jsonx.String:
		return "a string"
	case jsonx.Array:
		return "an array"
	case jsonx.Object:
		return "an object"
	}
	return "an invalid value"
}

func isNull(v []byte) bool { return jsonx.KindOf(v) == jsonx.Null }

func str(param string, v []byte) (string, error) {
	if jsonx.KindOf(v) != jsonx.String {
		return "", invalidType(param, "a string", v)
	}
	// The body is valid JSON: a string without escapes whose bytes are UTF-8 is its own value
	// (encoding/json would turn invalid UTF-8 into U+FFFD), and most strings are that.
	v = bytes.TrimSpace(v)
	if in := v[1 : len(v)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", invalidType(param, "a string", v)
	}
	return s, nil
}

// optStr is a string or null ("" for null).
func optStr(param string, v []byte) (string, error) {
	if isNull(v) {
		return "", nil
	}
	return str(param, v)
}

func enum(param string, v []byte, values ...string) (string, error) {
	s, err := str(param, v)
	if err != nil {
		return "", err
	}
	for _, x := range values {
		if s == x {
			return s, nil
		}
	}
	return "", invalidValue(param, s, values...)
}

func boolean(param string, v []byte) (bool, error) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalidType(param, "a boolean", v)
}

func integer(param string, v []byte, lo, hi int) (int, error) {
	if jsonx.KindOf(v) != jsonx.Number {
		return 0, invalidType(param, "an integer", v)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return 0, invalidType(param, "an integer", v)
	}
	if n < int64(lo) {
		return 0, fail(bad(param, "integer_below_min_value", "Invalid '"+param+"': integer below minimum value. Expected a value >= "+strconv.Itoa(lo)+", but got "+strconv.FormatInt(n, 10)+" instead."))
	}
	if n > int64(hi) {
		return 0, fail(bad(param, "integer_above_max_value", "Invalid '"+param+"': integer above maximum value. Expected a value <= "+strconv.Itoa(hi)+", but got "+strconv.FormatInt(n, 10)+" instead."))
	}
	return int(n), nil
}

func decimal(param string, v []byte, lo, hi float64) (*float64, error) {
	if isNull(v) {
		return nil, nil
	}
	if jsonx.KindOf(v) != jsonx.Number {
		return nil, invalidType(param, "a decimal", v)
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, invalidType(param, "a decimal", v)
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	if f < lo {
		return nil, fail(bad(param, "decimal_below_min_value", "Invalid '"+param+"': decimal below minimum value. Expected a value >= "+g(lo)+", but got "+g(f)+" instead."))
	}
	if f > hi {
		return nil, fail(bad(param, "decimal_above_max_value", "Invalid '"+param+"': decimal above maximum value. Expected a value <= "+g(hi)+", but got "+g(f)+" instead."))
	}
	return &f, nil
}

// object walks the members of an object value, refusing any other kind.
func object(param string, v []byte, fn func(key string, v []byte) error) error {
	if jsonx.KindOf(v) != jsonx.Object {
		return invalidType(param, "an object", v)
	}
	return jsonx.Members(v, fn)
}

// array walks the elements of an array value, refusing any other kind.
func array(param string, v []byte, fn func(i int, v []byte) error) error {
	if jsonx.KindOf(v) != jsonx.Array {
		return invalidType(param, "an array", v)
	}
	return jsonx.Elements(v, fn)
}

func at(param string, i int) string { return param + "[" + strconv.Itoa(i) + "]" }

func join(param, key string) string {
	if param == "" {
		return key
	}
	return param + "." + key
}
