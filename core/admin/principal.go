package admin

import (
	"context"

	"github.com/fngate/fngate/core/config"
)

// Principal is who is calling the admin API, once authenticated: an admin key, a stored
// key with a role, or a person signed in with the organisation's identity provider.
type Principal struct {
	ID   string // key:<id>, or oidc:<issuer>#<sub>
	Name string // a key's name, or the OIDC email
	Role string // keystore.RoleAdmin | RoleViewer | RoleTeamAdmin
	Team string // team-admin: the team it manages
	// Key is a team-admin's own key: its models, rate and budget bound what it may grant
	// (nil otherwise).
	Key *config.Key
}

// principalKey is unexported so that only WithPrincipal can put a principal in a context:
// nothing a client sends (a header, a cookie) can.
type principalKey struct{}

// WithPrincipal returns ctx carrying p, for an in-process caller (the console) that has
// authenticated p itself and calls the admin handler directly. The handler then skips its
// own authentication.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalFrom returns the principal WithPrincipal put in ctx, if any.
func principalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
