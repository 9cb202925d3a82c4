package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fngate/fngate/core/keystore"
)

// MaxBody bounds every request body: a key with every field filled is a few KiB.
const MaxBody = 64 << 10

// readBody decodes r's JSON body into v strictly: at most MaxBody, one value, no field v
// does not have. An empty body is allowed when empty is (it decodes as {}).
func readBody(w http.ResponseWriter, r *http.Request, v any, empty bool) *apiError {
	body := r.Body
	if body == nil { // an in-process caller's request (the console, the CLI) may have none
		body = http.NoBody
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, body, MaxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return badRequest("", "body_too_large", fmt.Sprintf("the body is over %d bytes", MaxBody))
		}
		return badRequest("", "body_unreadable", "the body could not be read: "+err.Error())
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if empty {
			return nil
		}
		return badRequest("", "body_required", "this operation takes a JSON object body")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return badRequest("", "unsupported_content_type", "the body must be application/json, got "+ct)
	}
	return decodeStrict(b, v)
}

// decodeStrict decodes one JSON value with no unknown fields.
func decodeStrict(b []byte, v any) *apiError {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return decodeError(err)
	}
	if d.More() {
		return badRequest("", "trailing_data", "the body holds more than one JSON value")
	}
	if _, err := d.Token(); err != io.EOF {
		return badRequest("", "trailing_data", "the body holds more than one JSON value")
	}
	return nil
}

// decodeError turns a decoder's complaint into a 400 naming the field when it can.
func decodeError(err error) *apiError {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var fe *fieldError
	switch {
	case errors.As(err, &fe):
		return badRequest(fe.field, "invalid_value", fe.msg)
	case errors.As(err, &te):
		field := te.Field
		return badRequest(field, "invalid_type", fmt.Sprintf("%s must be %s, not a JSON %s", nameOr(field, "the body"), jsonKind(te.Type.Kind().String()), te.Value))
	case errors.As(err, &se):
		return badRequest("", "invalid_json", fmt.Sprintf("the body is not valid JSON (offset %d): %v", se.Offset, se))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(f, "unknown_field", fmt.Sprintf("unknown field %q (see %sopenapi.json)", f, Prefix))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "invalid_json", "the body ends before its JSON value does")
	}
	return badRequest("", "invalid_json", "the body is not valid JSON: "+err.Error())
}

func nameOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a number of the right size"
}

// fieldError is a value the body's JSON holds that its field refuses.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.msg }

// opt is a body field that may be absent, null or a value: a PATCH tells the three apart
// (absent keeps, null clears, a value sets).
type opt[T any] struct {
	set, null bool
	v         T
}

func (o *opt[T]) UnmarshalJSON(b []byte) error {
	o.set = true
	if string(b) == "null" {
		o.null = true
		return nil
	}
	// A nested decoder of its own: the outer decoder's DisallowUnknownFields does not
	// reach inside an Unmarshaler.
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(&o.v)
}

// query reads r's query parameters, refusing any not in allowed and any given twice: a typo
// (limt=) must not silently mean the default.
func query(r *http.Request, allowed ...string) (url.Values, *apiError) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("", "invalid_query", "the query string is malformed: "+err.Error())
	}
	for k, vs := range q {
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		switch {
		case !known:
			return nil, badRequest(k, "unknown_parameter", fmt.Sprintf("unknown query parameter %q; this operation takes: %s", k, strings.Join(allowed, ", ")))
		case len(vs) > 1:
			return nil, badRequest(k, "repeated_parameter", fmt.Sprintf("query parameter %q is given %d times", k, len(vs)))
		case len(vs[0]) > 256:
			return nil, badRequest(k, "parameter_too_long", fmt.Sprintf("query parameter %q is over 256 characters", k))
		}
	}
	return q, nil
}

// pageLimit reads a page size: 1 to keystore.MaxPage, DefaultPage when absent.
func pageLimit(q url.Values) (int, *apiError) {
	s := q.Get("limit")
	if s == "" {
		return keystore.DefaultPage, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > keystore.MaxPage {
		return 0, badRequest("limit", "invalid_limit", fmt.Sprintf("limit must be a whole number from 1 to %d, got %q", keystore.MaxPage, s))
	}
	return n, nil
}

func boolParam(q url.Values, name string) (bool, *apiError) {
	switch q.Get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, badRequest(name, "invalid_boolean", name+" must be true or false")
}

// timeParam reads an RFC 3339 time, or a UTC day (YYYY-MM-DD) meaning its start.
func timeParam(q url.Values, name string) (time.Time, *apiError) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, badRequest(name, "invalid_time", name+" must be an RFC 3339 time (2026-12-01T00:00:00Z) or a day (2026-12-01), got "+strconvQuote(s))
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// validKeyID is a stored key's id: key_ and 24 base62 characters (keystore.NewID).
var validKeyID = regexp.MustCompile(`^key_[0-9A-Za-z]{24}$`)

// validEntryID is an audit entry's id (keystore.NewEntryID), the audit's page cursor.
var validEntryID = regexp.MustCompile(`^aud_[0-9A-Za-z]{24}$`)

func keyID(r *http.Request) (string, *apiError) {
	id := r.PathValue("id")
	if !validKeyID.MatchString(id) {
		return "", badRequest("id", "invalid_key_id", "a key id is key_ and 24 letters and digits, got "+strconv.Quote(clip(id, 64)))
	}
	return id, nil
}

// clip shortens what a client sent before it is echoed in an error.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// plainText reports whether s has no control characters (a name, a reason, a description
// shown in a console and a terminal).
func plainText(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}
