package modelarmorfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// maxBody is what the fake reads of a request; the real service refuses far smaller ones.
const maxBody = 8 << 20

// parse checks a request's path, token and body as the service does, and returns the call
// and, when the request is refused, the status and message to answer.
func (s *Server) parse(r *http.Request) (Call, int, string) {
	call := Call{Path: r.URL.Path, Authorization: r.Header.Get("Authorization")}
	resource := "/v1/" + s.opts.Template
	var method, field string
	switch {
	case r.URL.Path == resource && r.Method == http.MethodGet:
		call.Method = "GetTemplate"
	case r.URL.Path == resource+":sanitizeUserPrompt" && r.Method == http.MethodPost:
		call.Method, field = "sanitizeUserPrompt", "userPromptData"
	case r.URL.Path == resource+":sanitizeModelResponse" && r.Method == http.MethodPost:
		call.Method, field = "sanitizeModelResponse", "modelResponseData"
	default:
		return call, http.StatusNotFound, "The requested URL " + r.URL.Path + " was not found on this server."
	}
	method = call.Method
	if call.Authorization != "Bearer "+s.opts.Token {
		return call, http.StatusUnauthorized, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
	}
	if method == "GetTemplate" {
		return call, 0, ""
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return call, http.StatusBadRequest, "Invalid JSON payload received. " + err.Error()
	}
	text, problem := decodeBody(body, field)
	call.Text = text
	if problem != "" {
		return call, http.StatusBadRequest, problem
	}
	return call, 0, ""
}

// decodeBody reads a SanitizeUserPromptRequest or SanitizeModelResponseRequest as Google's
// JSON parser does: members by their lowerCamelCase or proto names, unknown ones refused.
func decodeBody(body []byte, field string) (string, string) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return "", "Invalid JSON payload received. " + err.Error()
	}
	allowed := map[string]string{"name": "name", field: field, snake(field): field,
		"multiLanguageDetectionMetadata": "", "multi_language_detection_metadata": ""}
	if field == "modelResponseData" {
		allowed["userPrompt"], allowed["user_prompt"] = "", ""
	}
	var data json.RawMessage
	for k, v := range top {
		canonical, ok := allowed[k]
		if !ok {
			return "", "Invalid JSON payload received. Unknown name " + strconv.Quote(k) + ": Cannot find field."
		}
		if canonical == field {
			data = v
		}
	}
	if data == nil {
		return "", "Request contains an invalid argument: " + snake(field) + " is required."
	}
	var item map[string]json.RawMessage
	if err := json.Unmarshal(data, &item); err != nil {
		return "", "Invalid value at '" + snake(field) + "' (type.googleapis.com/google.cloud.modelarmor.v1.DataItem), " + string(data)
	}
	var text string
	for k, v := range item {
		switch k {
		case "text":
			if err := json.Unmarshal(v, &text); err != nil {
				return "", "Invalid value at '" + snake(field) + ".text' (TYPE_STRING), " + string(v)
			}
		case "byteItem", "byte_item":
			return "", "Request contains an invalid argument: the fake serves text data items only."
		default:
			return "", "Invalid JSON payload received. Unknown name " + strconv.Quote(k) + " at '" + snake(field) + "': Cannot find field."
		}
	}
	return text, ""
}

// snake is a lowerCamelCase member's proto name.
func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
