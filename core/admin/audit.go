package admin

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/fngate/fngate/core/keystore"
)

// auditObject is one audit entry as the API shows it.
type auditObject struct {
	ID      string          `json:"id"`
	Time    time.Time       `json:"time"`
	Actor   string          `json:"actor"`
	Role    string          `json:"role"`
	Action  string          `json:"action"`
	Target  string          `json:"target"`
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	Request string          `json:"request"`
}

func rawOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func (h *Handler) audit(w http.ResponseWriter, r *http.Request, p *Principal) {
	q, e := query(r, "target", "since", "until", "after", "limit")
	if e != nil {
		h.fail(w, r, e)
		return
	}
	limit, e := pageLimit(q)
	if e != nil {
		h.fail(w, r, e)
		return
	}
	since, e := timeParam(q, "since")
	if e != nil {
		h.fail(w, r, e)
		return
	}
	until, e := timeParam(q, "until")
	if e != nil {
		h.fail(w, r, e)
		return
	}
	target, after := q.Get("target"), q.Get("after")
	switch {
	case !since.IsZero() && !until.IsZero() && !since.Before(until):
		h.fail(w, r, badRequest("until", "invalid_range", "until must be after since"))
		return
	case after != "" && !validEntryID.MatchString(after):
		h.fail(w, r, badRequest("after", "invalid_cursor", "after is the next cursor of a previous page (an audit entry id)"))
		return
	case !plainText(target):
		h.fail(w, r, badRequest("target", "invalid_target", "target is a key id or a route id"))
		return
	case h.keys == nil:
		h.fail(w, r, unavailable("no_key_store", "the audit log lives in the key store, and no key_store is configured"))
		return
	}
	if p.Role == keystore.RoleTeamAdmin {
		// A team-admin reads the log of one of its team's keys at a time: the log itself
		// holds every team's changes.
		if !strings.HasPrefix(target, keystore.IDPrefix) || !validKeyID.MatchString(target) {
			h.fail(w, r, forbidden("target_required", "a team-admin reads the audit of one of its team's keys: give target=<key id>"))
			return
		}
		ctx, cancel := ctxStore(r)
		k, err := h.keys.Get(ctx, target)
		cancel()
		if err != nil || k.Team != p.Team {
			h.fail(w, r, forbidden("other_team", "the key is not one of team "+p.Team+"'s"))
			return
		}
	}
	ctx, cancel := ctxStore(r)
	page, err := h.keys.Audit(ctx, keystore.AuditQuery{Target: target, Since: since, Until: until, After: after, Limit: limit})
	cancel()
	if err != nil {
		h.storeFailed(w, r, "audit", err)
		return
	}
	data := make([]auditObject, 0, len(page.Entries))
	for _, en := range page.Entries {
		data = append(data, auditObject{ID: en.ID, Time: en.Time.UTC(), Actor: en.Actor, Role: en.Role, Action: en.Action,
			Target: en.Target, Before: rawOrNull(en.Before), After: rawOrNull(en.After), Request: en.Request})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "next": page.Next})
}
