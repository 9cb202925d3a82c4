package admin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"regexp"
)

type requestIDKey struct{}

// validRequestID is a caller's X-Request-Id worth echoing (and logging): short, plain.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// harden sets what every answer carries, whatever it is: its request id, no caching (an
// answer may carry a key's secret once), headers that keep a browser from framing or
// sniffing it, and CORS only for the origins admin.cors_origins names.
func (h *Handler) harden(w http.ResponseWriter, r *http.Request, next http.Handler) {
	id := r.Header.Get("X-Request-Id")
	if !validRequestID.MatchString(id) {
		id = newRequestID()
	}
	hd := w.Header()
	hd.Set("X-Request-Id", id)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	hd.Set("Strict-Transport-Security", "max-age=31536000")
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	if origin := r.Header.Get("Origin"); origin != "" && h.cors[origin] {
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Request-Id")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	next.ServeHTTP(w, r)
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "adm_" + hex.EncodeToString(b[:])
}
