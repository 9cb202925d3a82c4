package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/mcpsessions"
)

// The SDK's sessions live in the process that opened them; a function's next message may
// reach any instance. So the gateway serves every message statelessly and, for the protocol
// versions whose initialize opens a session, keeps what the session must remember (the
// client's initialize, its logging level, whose it is) in a store every instance reads: the
// session is then continued wherever its next message lands.

const sessionHeader = "Mcp-Session-Id"

// sessionState is what the store holds of one session.
type sessionState struct {
	Protocol   string                `json:"protocol"`
	Initialize *sdk.InitializeParams `json:"initialize,omitempty"`
	LogLevel   sdk.LoggingLevel      `json:"log_level,omitempty"`
	// Refreshed is when the expiry was last pushed out: a session in use is written again
	// once half its TTL has passed, not on every message.
	Refreshed time.Time `json:"refreshed"`
}

// message is what the gateway reads of each message of a POST to route it.
type message struct {
	Method string `json:"method"`
	Params struct {
		ProtocolVersion string           `json:"protocolVersion"`
		Level           sdk.LoggingLevel `json:"level"`
	} `json:"params"`
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request, caller *mcpcall.Caller) {
	id := r.Header.Get(sessionHeader)
	if h.opt.Sessions == nil && id == "" {
		h.stateless.ServeHTTP(w, r)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opt.MaxMessageBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msgs := readMessages(body)

	switch {
	case id != "":
		h.continueSession(w, r, caller, id, msgs)
	case opensSession(msgs):
		h.openSession(w, r, caller, msgs)
	default:
		h.stateless.ServeHTTP(w, r)
	}
}

// readMessages reads a message or a batch; what is not JSON-RPC is left to the SDK to refuse.
func readMessages(body []byte) []message {
	body = bytes.TrimSpace(body)
	var msgs []message
	if len(body) > 0 && body[0] == '[' {
		_ = json.Unmarshal(body, &msgs)
		return msgs
	}
	var m message
	if json.Unmarshal(body, &m) == nil {
		msgs = append(msgs, m)
	}
	return msgs
}

// opensSession reports an initialize of a protocol version with sessions.
func opensSession(msgs []message) bool {
	for _, m := range msgs {
		if m.Method == "initialize" && m.Params.ProtocolVersion < sessionlessVersion {
			return true
		}
	}
	return false
}

// openSession stores the session before initialize is answered: the client's next message
// may reach another instance the moment it has the session's id.
func (h *Handler) openSession(w http.ResponseWriter, r *http.Request, caller *mcpcall.Caller, msgs []message) {
	id := rand.Text()
	st := sessionState{Protocol: negotiate(msgs[slices.IndexFunc(msgs, func(m message) bool { return m.Method == "initialize" })].Params.ProtocolVersion)}
	var init struct {
		Params *sdk.InitializeParams `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) && json.Unmarshal(body, &init) == nil {
		st.Initialize = init.Params
	}
	if !h.putSession(w, r, caller, id, &st) {
		return
	}
	h.serveSession(w, r, id, nil)
}

// continueSession serves a message of a stored session, on any instance.
func (h *Handler) continueSession(w http.ResponseWriter, r *http.Request, caller *mcpcall.Caller, id string, msgs []message) {
	st, ok := h.session(w, r, caller, id)
	if !ok {
		return
	}
	changed := false
	for _, m := range msgs {
		if m.Method == "logging/setLevel" && m.Params.Level != "" {
			st.LogLevel, changed = m.Params.Level, true
		}
	}
	if changed || h.opt.Now().Sub(st.Refreshed) > h.opt.SessionTTL/2 {
		if !h.putSession(w, r, caller, id, st) {
			return
		}
	}
	h.serveSession(w, r, id, &sdk.ServerSessionState{
		InitializeParams:          orDefault(st.Initialize, st.Protocol),
		InitializedParams:         &sdk.InitializedParams{},
		NegotiatedProtocolVersion: st.Protocol,
		LogLevel:                  st.LogLevel,
	})
}

func orDefault(p *sdk.InitializeParams, version string) *sdk.InitializeParams {
	if p != nil {
		return p
	}
	return &sdk.InitializeParams{ProtocolVersion: version}
}

// negotiate is the version the SDK answers a client's initialize with: the client's when the
// SDK speaks it, else the newest with sessions.
func negotiate(client string) string {
	supported := sdk.SupportedProtocolVersions()
	if slices.Contains(supported, client) {
		return client
	}
	best := ""
	for _, v := range supported {
		if v < sessionlessVersion && v > best {
			best = v
		}
	}
	return best
}

// session reads session id for its owner; another caller's session is as unknown as one
// that never was (404: the client opens a new one).
func (h *Handler) session(w http.ResponseWriter, r *http.Request, caller *mcpcall.Caller, id string) (*sessionState, bool) {
	if h.opt.Sessions == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil, false
	}
	s, err := h.opt.Sessions.Get(r.Context(), id)
	switch {
	case errors.Is(err, mcpsessions.ErrNotFound):
	case err != nil:
		h.opt.Logger.Error("mcp_session_store_error", slog.String("op", "get"), slog.String("error", err.Error()))
		http.Error(w, "the session store did not answer; try again", http.StatusServiceUnavailable)
		return nil, false
	case s.Owner == caller.ID:
		var st sessionState
		if json.Unmarshal(s.State, &st) == nil {
			return &st, true
		}
	}
	http.Error(w, "session not found", http.StatusNotFound)
	return nil, false
}

func (h *Handler) putSession(w http.ResponseWriter, r *http.Request, caller *mcpcall.Caller, id string, st *sessionState) bool {
	now := h.opt.Now()
	st.Refreshed = now
	state, _ := json.Marshal(st)
	err := h.opt.Sessions.Put(r.Context(), mcpsessions.Session{ID: id, Owner: caller.ID, State: state, Expires: now.Add(h.opt.SessionTTL)})
	if err != nil {
		h.opt.Logger.Error("mcp_session_store_error", slog.String("op", "put"), slog.String("error", err.Error()))
		http.Error(w, "the session store did not answer; try again", http.StatusServiceUnavailable)
		return false
	}
	return true
}

// serveSession serves r on a session made for it alone, with the stored state (nil for the
// initialize that opens it).
func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, id string, state *sdk.ServerSessionState) {
	if accept := strings.Join(r.Header.Values("Accept"), ","); !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return
	}
	// Stateless: the session makes no request of the client, whose answer could arrive at
	// another instance; its id is the stored session's.
	t := &sdk.StreamableServerTransport{SessionID: id, Stateless: true}
	ss, err := h.server.Connect(r.Context(), t, &sdk.ServerSessionOptions{State: state})
	if err != nil {
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	defer ss.Close()
	t.ServeHTTP(w, r)
}

// deleteSession ends a session at the client's request.
func (h *Handler) deleteSession(w http.ResponseWriter, r *http.Request, caller *mcpcall.Caller) {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		http.Error(w, "Bad Request: DELETE requires an Mcp-Session-Id header", http.StatusBadRequest)
		return
	}
	if _, ok := h.session(w, r, caller, id); !ok {
		return
	}
	if err := h.opt.Sessions.Delete(r.Context(), id); err != nil {
		h.opt.Logger.Error("mcp_session_store_error", slog.String("op", "delete"), slog.String("error", err.Error()))
		http.Error(w, "the session store did not answer; try again", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
