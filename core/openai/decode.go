package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/llm"
)

// openAIFields are request fields OpenAI defines that the gateway deliberately does not
// implement. They get a "not supported" answer instead of "unrecognized".
var openAIFields = map[string]string{
	"max_tokens":             "max_tokens is not supported: use max_completion_tokens",
	"frequency_penalty":      "",
	"presence_penalty":       "",
	"logit_bias":             "",
	"logprobs":               "",
	"top_logprobs":           "",
	"modalities":             "",
	"audio":                  "",
	"prediction":             "",
	"reasoning_effort":       "",
	"response_format":        "",
	"seed":                   "",
	"service_tier":           "",
	"stop":                   "",
	"store":                  "",
	"top_p":                  "",
	"parallel_tool_calls":    "",
	"web_search_options":     "",
	"functions":              "functions is deprecated and not supported: use tools",
	"function_call":          "function_call is deprecated and not supported: use tool_choice",
	"prompt_cache_key":       "",
	"prompt_cache_retention": "",
	"safety_identifier":      "",
	"verbosity":              "",
	"suffix":                 "",
	"echo":                   "",
	"best_of":                "",
}

func newStrictDecoder(b []byte) *json.Decoder {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d
}

// decodeStrict decodes one JSON object into v, refusing unknown fields, wrong types, keys
// that match a field only by case, repeated keys and trailing data. The typed decode is the
// fast path, followed by one scan of the keys (encoding/json folds case and keeps the last of
// repeated keys without a word); only when the decode fails is the body parsed a second time,
// generically, to name the exact parameter at fault (encoding/json reports neither array
// indexes nor the path of an unknown field).
func decodeStrict(body []byte, v any) *llm.Error {
	if len(bytes.TrimSpace(body)) == 0 {
		return llm.BadRequest("", "The request body is empty: send a JSON object.")
	}
	t := reflect.TypeOf(v).Elem()
	d := newStrictDecoder(body)
	err := d.Decode(v)
	if err == nil {
		if rest := bytes.TrimSpace(body[d.InputOffset():]); len(rest) > 0 {
			return llm.BadRequest("", "We could not parse the JSON body of your request: unexpected data after the top-level object.")
		}
		return checkKeys(body, t, "")
	}
	return diagnose(body, t, err)
}

func diagnose(body []byte, t reflect.Type, decodeErr error) *llm.Error {
	var fe *FieldError
	if errors.As(decodeErr, &fe) {
		return fe.badRequest()
	}
	var syn *json.SyntaxError
	if errors.As(decodeErr, &syn) {
		return llm.BadRequest("", fmt.Sprintf("We could not parse the JSON body of your request: %s (at byte %d).", syn.Error(), syn.Offset))
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var generic any
	if err := d.Decode(&generic); err != nil {
		return llm.BadRequest("", "We could not parse the JSON body of your request: "+err.Error()+".")
	}
	if _, ok := generic.(map[string]any); !ok {
		return llm.BadRequest("", "The request body must be a JSON object.")
	}
	// Before the walk: the generic decode kept only the last of repeated keys, and the walk
	// matches field names exactly, so a key that differs by case would read as unknown.
	if e := checkKeys(body, t, ""); e != nil {
		return e
	}
	if e := walk(generic, t, ""); e != nil {
		return e
	}
	return llm.BadRequest("", "Invalid request: "+decodeErr.Error())
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
var rawMessageType = reflect.TypeFor[json.RawMessage]()

func walk(v any, t reflect.Type, path string) *llm.Error {
	if v == nil {
		return nil // null leaves a Go value at its zero, as encoding/json does
	}
	if t == rawMessageType {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, _ := json.Marshal(v)
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				return fe.badRequest()
			}
			return llm.BadRequest(path, path+": "+err.Error())
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return walk(v, t.Elem(), path)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return typeError(path, "an object", v)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fieldByJSONName(t, k)
			if !ok {
				return refusedField(join(path, k), k)
			}
			if e := walk(obj[k], f.Type, join(path, k)); e != nil {
				return e
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return typeError(path, "an array", v)
		}
		for i, el := range arr {
			if e := walk(el, t.Elem(), path+"["+strconv.Itoa(i)+"]"); e != nil {
				return e
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return typeError(path, "an object", v)
		}
		for k, el := range obj {
			if e := walk(el, t.Elem(), join(path, k)); e != nil {
				return e
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			if _, isArr := v.([]any); isArr && strings.HasSuffix(path, ".content") {
				return llm.Unsupported(path, path+": content-part arrays (text, image, audio or file parts) are not supported; send content as a string")
			}
			return typeError(path, "a string", v)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return typeError(path, "a boolean", v)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return typeError(path, "an integer", v)
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return llm.BadRequest(path, path+": expected an integer, got "+string(n))
		}
	case reflect.Float64, reflect.Float32:
		if _, ok := v.(json.Number); !ok {
			return typeError(path, "a number", v)
		}
	}
	return nil
}

// fieldByJSONName matches exactly: checkKeys has already refused keys that differ by case.
func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func refusedField(path, key string) *llm.Error {
	if !strings.Contains(path, ".") && !strings.Contains(path, "[") {
		if msg, known := openAIFields[key]; known {
			if msg == "" {
				msg = key + " is not supported by this gateway; remove it from the request"
			}
			return llm.Unsupported(path, msg)
		}
		return &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Param: path, Code: "unknown_parameter",
			Message: "Unrecognized request argument supplied: " + key}
	}
	return llm.Unsupported(path, path+" is not supported by this gateway")
}

func typeError(path, want string, got any) *llm.Error {
	return llm.BadRequest(path, path+": expected "+want+", got "+jsonKind(got))
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
