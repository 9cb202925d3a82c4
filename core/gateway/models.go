package gateway

import (
	"net/http"
	"strconv"
	"time"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// modelsWire picks the error shape of a request no door owns (the model list): Anthropic's
// for Anthropic clients, OpenAI's for the rest.
func modelsWire(r *http.Request) wire {
	if anthropicClient(r) {
		return &messagesDoor{}
	}
	return &chatDoor{}
}

// serveModels lists the gateway models the caller's key may use: in Anthropic's list shape
// (with its paging: limit, before_id, after_id) for a request that carries anthropic-version,
// as Claude Code's gateway model discovery sends; in OpenAI's otherwise.
func (g *Gateway) serveModels(w http.ResponseWriter, r *http.Request) {
	q := requestOf(g, w, r)
	d := modelsWire(r)
	if !q.admit(d) {
		return
	}
	rc := &q.rc
	names := make([]string, 0, len(g.names))
	for _, name := range g.names {
		if allowsModel(rc.key, name) {
			names = append(names, name)
		}
	}
	if _, anthropic := d.(*messagesDoor); anthropic {
		g.serveAnthropicModels(w, r, rc, names)
		return
	}
	b := make([]byte, 0, 64+len(names)*96)
	b = append(b, `{"object":"list","data":[`...)
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendOpenAIModel(b, name)
	}
	b = append(b, "]}\n"...)
	writeJSON(w, http.StatusOK, b)
}

func (g *Gateway) serveAnthropicModels(w http.ResponseWriter, r *http.Request, rc *requestCtx, names []string) {
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			(&messagesDoor{}).writeError(w, rc, llm.BadRequest("limit", "limit: Input should be an integer from 1 to 1000"))
			return
		}
		limit = n
	}
	from, to := 0, len(names)
	if id := q.Get("after_id"); id != "" {
		for i, name := range names {
			if name == id {
				from = i + 1
			}
		}
	}
	if id := q.Get("before_id"); id != "" {
		for i, name := range names {
			if name == id {
				to = i
			}
		}
		from = max(from, to-limit)
	}
	page := names[min(from, to):to]
	more := len(page) > limit
	if more {
		page = page[:limit]
	}
	b := make([]byte, 0, 96+len(page)*128)
	b = append(b, `{"data":[`...)
	for i, name := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendAnthropicModel(b, name)
	}
	b = append(b, `],"has_more":`...)
	b = strconv.AppendBool(b, more || (q.Get("before_id") != "" && from > 0))
	b = append(b, `,"first_id":`...)
	b = appendNullable(b, page, 0)
	b = append(b, `,"last_id":`...)
	b = appendNullable(b, page, len(page)-1)
	b = append(b, "}\n"...)
	writeJSON(w, http.StatusOK, b)
}

// serveModel answers GET /v1/models/{id} (the SDKs' models.retrieve).
func (g *Gateway) serveModel(w http.ResponseWriter, r *http.Request) {
	q := requestOf(g, w, r)
	d := modelsWire(r)
	if !q.admit(d) {
		return
	}
	rc := &q.rc
	name := r.PathValue("id")
	if _, err := g.lookup(name, rc); err != nil {
		d.writeError(w, rc, err)
		return
	}
	var b []byte
	if _, anthropic := d.(*messagesDoor); anthropic {
		b = g.appendAnthropicModel(b, name)
	} else {
		b = g.appendOpenAIModel(b, name)
	}
	writeJSON(w, http.StatusOK, append(b, '\n'))
}

func (g *Gateway) appendOpenAIModel(b []byte, name string) []byte {
	b = append(b, `{"id":`...)
	b = jsonx.AppendString(b, name)
	b = append(b, `,"object":"model","created":`...)
	b = strconv.AppendInt(b, g.started, 10)
	return append(b, `,"owned_by":"fngate"}`...)
}

func (g *Gateway) appendAnthropicModel(b []byte, name string) []byte {
	display := name
	if m := g.models[name]; m != nil && m.cfg.Description != "" {
		display = m.cfg.Description
	}
	b = append(b, `{"type":"model","id":`...)
	b = jsonx.AppendString(b, name)
	b = append(b, `,"display_name":`...)
	b = jsonx.AppendString(b, display)
	b = append(b, `,"created_at":`...)
	b = jsonx.AppendString(b, time.Unix(g.started, 0).UTC().Format(time.RFC3339))
	return append(b, '}')
}

func appendNullable(b []byte, page []string, i int) []byte {
	if i < 0 || i >= len(page) {
		return append(b, "null"...)
	}
	return jsonx.AppendString(b, page[i])
}

func (g *Gateway) serveHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`+"\n"))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
