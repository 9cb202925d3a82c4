package admin

import (
	"net/http"

	"github.com/fngate/fngate/core/keystore"
)

// access is who may call an operation.
type access int

const (
	public    access = iota // no authentication (the OpenAPI document)
	anyone                  // any principal with a role (me)
	keysRead                // admin, viewer; team-admin for its own team's keys (keys, usage)
	keysWrite               // admin; team-admin for its own team's keys, within its bounds
	allRead                 // admin, viewer, team-admin (the routes' health)
	auditRead               // admin, viewer; team-admin for entries about its team's keys
	adminOnly               // admin (cool and restore routes)
)

// check refuses p the operation unless its role allows it; what a team-admin may touch
// within an operation (its team's keys) the operation checks itself.
func (a access) check(p *Principal, method string) *apiError {
	switch p.Role {
	case keystore.RoleAdmin:
		return nil
	case keystore.RoleViewer:
		if method == http.MethodGet {
			return nil
		}
		return forbidden("read_only", "the viewer role reads and changes nothing")
	case keystore.RoleTeamAdmin:
		switch {
		case a == anyone:
			return nil
		case p.Team == "":
			return forbidden("no_team", "this team-admin key has no team, so there is nothing it may manage")
		case a == adminOnly:
			return forbidden("admin_only", "only the admin role may do this")
		}
		return nil
	}
	return forbidden("no_admin_role", "the caller has no admin role")
}
