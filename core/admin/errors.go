package admin

import (
	"encoding/json"
	"log/slog"
	"net/http"
)

// Error types, OpenAI's names, so an OpenAI-style client reads them as it reads the gateway's.
const (
	typeInvalid    = "invalid_request_error"
	typeAuth       = "authentication_error"
	typePermission = "permission_error"
	typeNotFound   = "not_found_error"
	typeConflict   = "conflict_error"
	typeServer     = "server_error"
)

// apiError is every refusal the API answers: one shape, its status beside it.
type apiError struct {
	status int
	typ    string
	code   string
	param  string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(param, code, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: code, param: param, msg: msg}
}

func forbidden(code, msg string) *apiError {
	return &apiError{status: http.StatusForbidden, typ: typePermission, code: code, msg: msg}
}

func notFound(code, msg string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: typeNotFound, code: code, msg: msg}
}

func conflict(code, msg string) *apiError {
	return &apiError{status: http.StatusConflict, typ: typeConflict, code: code, msg: msg}
}

func unavailable(code, msg string) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, typ: typeServer, code: code, msg: msg}
}

var errUnauthenticated = &apiError{status: http.StatusUnauthorized, typ: typeAuth, code: "invalid_admin_token",
	msg: "give an admin key, a key with an admin role or an ID token from the identity provider as Authorization: Bearer <token>"}

// fail answers e and logs it (its message never holds a secret: refusals name fields and
// ids, never the token).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, e *apiError) {
	if e.status >= 500 {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, e.status, map[string]any{"error": map[string]any{"message": e.msg, "type": e.typ, "param": nullable(e.param), "code": nullable(e.code)}})
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "admin refused",
		slog.String("request_id", requestID(r)), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", e.status), slog.String("code", e.code), slog.String("error", e.msg))
}

// storeFailed answers 503 for a store that could not answer, and logs why.
func (h *Handler) storeFailed(w http.ResponseWriter, r *http.Request, what string, err error) {
	h.log.LogAttrs(r.Context(), slog.LevelWarn, "admin store failed", slog.String("request_id", requestID(r)),
		slog.String("store", what), slog.String("error", err.Error()))
	h.fail(w, r, unavailable(what+"_unavailable", "the "+what+" store cannot be reached right now; retry shortly"))
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
