package admin

import (
	_ "embed"
	"net/http"
)

// openapiJSON is the API's OpenAPI 3.1 document, written by hand beside the code it
// describes; a test holds its paths and the route table together.
//
//go:embed openapi.json
var openapiJSON []byte

// OpenAPI returns the OpenAPI 3.1 document of the admin API.
func OpenAPI() []byte { return append([]byte(nil), openapiJSON...) }

func (h *Handler) openAPI(w http.ResponseWriter, r *http.Request, _ *Principal) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openapiJSON)
}
