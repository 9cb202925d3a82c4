package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/fngate/fngate/core/keystore"
)

// storeTimeout bounds each store call the API makes on a request's behalf; historyTimeout a
// read of usage history, which may span 400 days of items.
const (
	storeTimeout   = 5 * time.Second
	historyTimeout = 15 * time.Second
)

// authenticate finds the caller: a principal handed over in process (WithPrincipal), else
// the bearer token, tried as an OIDC ID token when it is shaped like one, else as a key.
func (h *Handler) authenticate(r *http.Request) (*Principal, *apiError) {
	if p := principalFrom(r.Context()); p != nil {
		return p, nil
	}
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > maxTokenLen {
		return nil, errUnauthenticated
	}
	if h.verifier != nil && looksLikeJWT(token) {
		return h.oidcPrincipal(r, token)
	}
	return h.keyPrincipal(r, token)
}

// maxTokenLen bounds a bearer token: an ID token with many groups is a few KiB.
const maxTokenLen = 16 << 10

func looksLikeJWT(t string) bool {
	return strings.HasPrefix(t, "eyJ") && strings.Count(t, ".") == 2
}

// keyPrincipal is the admin key, or the stored key with a role, whose secret token is.
// Admin keys are compared by hash in constant time, every one of them, so the time taken
// says nothing of which (if any) matched.
func (h *Handler) keyPrincipal(r *http.Request, token string) (*Principal, *apiError) {
	hash := sha256.Sum256([]byte(token))
	var found *Principal
	for i := range h.adminKey {
		k := &h.adminKey[i]
		if subtle.ConstantTimeCompare(hash[:], k.Hash[:]) == 1 && found == nil {
			found = &Principal{ID: "key:" + k.Name, Name: k.Name, Role: k.Role}
		}
	}
	if found != nil {
		return found, nil
	}
	if h.keys == nil {
		return nil, errUnauthenticated
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	k, err := h.keys.ByHash(ctx, hash)
	switch {
	case errors.Is(err, keystore.ErrNotFound):
		return nil, errUnauthenticated
	case err != nil:
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "admin store failed", slog.String("request_id", requestID(r)),
			slog.String("store", "key"), slog.String("error", err.Error()))
		return nil, unavailable("key_store_unavailable", "the key store cannot be reached to check this token; retry shortly")
	case !k.Usable(h.now()):
		return nil, errUnauthenticated
	case k.Role == "":
		return nil, forbidden("no_admin_role", "this key has no admin role (admin, viewer or team-admin)")
	}
	p := &Principal{ID: "key:" + k.ID, Name: k.Name, Role: k.Role, Team: k.Team}
	if k.Role == keystore.RoleTeamAdmin {
		own := k.Key
		own.KeyLimits = h.cfg.KeyLimitsOf(&k.Key)
		p.Key = &own
	}
	return p, nil
}

// oidcPrincipal is the person whose ID token this is, with the role the config maps its
// claims to.
func (h *Handler) oidcPrincipal(r *http.Request, token string) (*Principal, *apiError) {
	c, err := h.verifier.Verify(r.Context(), token)
	if err != nil {
		var ue *UnavailableError
		if errors.As(err, &ue) {
			h.log.LogAttrs(r.Context(), slog.LevelWarn, "admin oidc unavailable", slog.String("request_id", requestID(r)), slog.String("error", err.Error()))
			return nil, unavailable("oidc_unavailable", "the identity provider's keys cannot be fetched right now; retry shortly")
		}
		h.log.LogAttrs(r.Context(), slog.LevelInfo, "admin oidc token refused", slog.String("request_id", requestID(r)), slog.String("error", err.Error()))
		return nil, &apiError{status: http.StatusUnauthorized, typ: typeAuth, code: "invalid_id_token",
			msg: "the ID token is not valid for this control plane (issuer, audience, expiry or signature)"}
	}
	role := RoleOf(h.cfg.Admin.OIDC, c)
	if role == "" {
		return nil, forbidden("no_admin_role", "signed in as "+c.Name()+", who has no role in admin.oidc.roles")
	}
	return &Principal{ID: "oidc:" + c.Issuer + "#" + c.Subject, Name: c.Name(), Role: role}, nil
}
