package gateway

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
)

// serveModels lists the gateway models this key may use, in OpenAI's list shape.
func (g *Gateway) serveModels(w http.ResponseWriter, key *config.Key) {
	b := make([]byte, 0, 64+len(g.names)*96)
	b = append(b, `{"object":"list","data":[`...)
	n := 0
	for _, name := range g.names {
		if !allowsModel(key, name) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"id":`...)
		b = openai.AppendString(b, name)
		b = append(b, `,"object":"model","created":`...)
		b = strconv.AppendInt(b, g.started, 10)
		b = append(b, `,"owned_by":"fngate"}`...)
	}
	b = append(b, "]}\n"...)
	writeJSON(w, http.StatusOK, b)
}

func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, r, http.MethodGet)
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`+"\n"))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func sortStrings(s []string) { sort.Strings(s) }
