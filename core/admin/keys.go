package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// keyFields is the body of POST /keys and PATCH /keys/{id}: every field optional to the
// decoder, so a PATCH tells a field left alone from one cleared (null).
type keyFields struct {
	Name           opt[string]                      `json:"name"`
	Team           opt[string]                      `json:"team"`
	Owner          opt[string]                      `json:"owner"`
	Description    opt[string]                      `json:"description"`
	Role           opt[string]                      `json:"role"`
	Models         opt[[]string]                    `json:"models"`
	Residency      opt[string]                      `json:"residency"`
	RequestProfile opt[string]                      `json:"request_profile"`
	Rate           opt[jsonRate]                    `json:"rate"`
	Budget         opt[jsonBudget]                  `json:"budget"`
	PerModel       opt[map[string]*jsonModelLimits] `json:"per_model"`
	Guardrails     opt[[]jsonGuardrailUse]          `json:"guardrails"`
	ExpiresAt      opt[string]                      `json:"expires_at"`
	// Version, on a PATCH, is the version the caller read: another change since is a 409.
	Version opt[int64] `json:"version"`
}

// versionOnly is the optional body of disable, enable, rotate and delete.
type versionOnly struct {
	Version opt[int64] `json:"version"`
}

// Bounds of a key's fields.
const (
	maxNameLen        = 64
	maxOwnerLen       = 256
	maxDescriptionLen = 1024
	maxGlobs          = 64
	maxGlobLen        = 256
	maxExpiry         = 10 * 366 * 24 * time.Hour
)

// validName is a key's name, team or residency label: what reads well in a log and a URL.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// Bounds of a key's guardrails: a few are what a key adds to its models'.
const maxGuardrails = 16

// apply sets on k what f gives, checking each field against cfg (the guardrails a key may
// name); create says f makes a new key (name required, version not taken).
func (f *keyFields) apply(cfg *config.Config, k *keystore.Key, now time.Time, create bool) *apiError {
	if create && f.Version.set {
		return badRequest("version", "unknown_field", "version is for PATCH: a new key is version 1")
	}
	if create && (!f.Name.set || f.Name.null || f.Name.v == "") {
		return badRequest("name", "missing_name", "name is required")
	}
	if f.Name.set {
		if f.Name.null || !validName.MatchString(f.Name.v) {
			return badRequest("name", "invalid_name", fmt.Sprintf("name must be 1 to %d letters, digits and . _ @ - (beginning with a letter or digit)", maxNameLen))
		}
		if strings.HasPrefix(f.Name.v, keystore.IDPrefix) {
			return badRequest("name", "invalid_name", "a name may not begin with "+keystore.IDPrefix+" (ids do)")
		}
		k.Name = f.Name.v
	}
	for _, s := range []struct {
		field string
		o     *opt[string]
		to    *string
		max   int
		label bool // a label: validName's characters
	}{
		{"team", &f.Team, &k.Team, maxNameLen, true},
		{"residency", &f.Residency, &k.Residency, maxNameLen, true},
		{"owner", &f.Owner, &k.Owner, maxOwnerLen, false},
		{"description", &f.Description, &k.Description, maxDescriptionLen, false},
	} {
		if !s.o.set {
			continue
		}
		v := s.o.v // null clears
		switch {
		case len(v) > s.max:
			return badRequest(s.field, "too_long", fmt.Sprintf("%s is over %d bytes", s.field, s.max))
		case s.label && v != "" && !validName.MatchString(v):
			return badRequest(s.field, "invalid_"+s.field, s.field+" must be letters, digits and . _ @ - (beginning with a letter or digit)")
		case !plainText(v):
			return badRequest(s.field, "invalid_"+s.field, s.field+" may not hold control characters")
		}
		*s.to = v
	}
	if f.Role.set {
		switch f.Role.v {
		case "", keystore.RoleAdmin, keystore.RoleViewer, keystore.RoleTeamAdmin:
			k.Role = f.Role.v
		default:
			return badRequest("role", "invalid_role", "role must be admin, viewer, team-admin or empty, got "+strconvQuote(clip(f.Role.v, 32)))
		}
	}
	if f.RequestProfile.set {
		switch f.RequestProfile.v {
		case "", config.ProfileStrict, config.ProfileExtended:
			k.RequestProfile = f.RequestProfile.v
		default:
			return badRequest("request_profile", "invalid_request_profile", "request_profile must be strict or extended")
		}
	}
	if f.Models.set {
		if e := checkGlobs("models", f.Models.v); e != nil {
			return e
		}
		k.Models = append([]string(nil), f.Models.v...)
		if f.Models.null {
			k.Models = nil
		}
	}
	if f.Rate.set {
		k.Rate = nil
		if !f.Rate.null {
			k.Rate = f.Rate.v.config()
		}
	}
	if f.Budget.set {
		k.Budget = nil
		if !f.Budget.null {
			k.Budget = f.Budget.v.config()
		}
	}
	if f.PerModel.set {
		globs := make([]string, 0, len(f.PerModel.v))
		for g := range f.PerModel.v {
			globs = append(globs, g)
		}
		if e := checkGlobs("per_model", globs); e != nil {
			return e
		}
		k.PerModel = perModelConfig(f.PerModel.v)
	}
	if f.Guardrails.set {
		if e := setGuardrails(cfg, k, f.Guardrails); e != nil {
			return e
		}
	}
	if err := k.KeyLimits.Validate("limits"); err != nil {
		return badRequest(limitParam(err.Error()), "invalid_limits", err.Error())
	}
	if f.ExpiresAt.set {
		k.ExpiresAt = nil
		if !f.ExpiresAt.null && f.ExpiresAt.v != "" {
			t, err := time.Parse(time.RFC3339, f.ExpiresAt.v)
			switch {
			case err != nil:
				return badRequest("expires_at", "invalid_time", "expires_at must be an RFC 3339 time (2027-01-01T00:00:00Z), got "+strconvQuote(clip(f.ExpiresAt.v, 64)))
			case !t.After(now):
				return badRequest("expires_at", "invalid_time", "expires_at must be in the future")
			case t.Sub(now) > maxExpiry:
				return badRequest("expires_at", "invalid_time", "expires_at must be within ten years")
			}
			t = t.UTC()
			k.ExpiresAt = &t
		}
	}
	if k.Role == keystore.RoleTeamAdmin && k.Team == "" {
		return badRequest("team", "team_required", "a team-admin key needs the team it manages")
	}
	return nil
}

// setGuardrails sets the key's guardrails from g, each a configured guardrail, with on and
// mode filled as the config fills a config key's. null clears them (key_defaults' apply);
// [] is none beyond the models' own.
func setGuardrails(cfg *config.Config, k *keystore.Key, g opt[[]jsonGuardrailUse]) *apiError {
	if g.null {
		k.Guardrails = nil
		return nil
	}
	if len(g.v) > maxGuardrails {
		return badRequest("guardrails", "too_many", fmt.Sprintf("guardrails holds at most %d", maxGuardrails))
	}
	uses := guardrailsConfig(g.v)
	if uses == nil {
		uses = []config.GuardrailUse{}
	}
	if err := cfg.CheckKeyGuardrails("guardrails", uses); err != nil {
		return badRequest("guardrails", "invalid_guardrails", err.Error())
	}
	k.Guardrails = uses
	return nil
}

// limitParam names the field of a limits error ("limits.rate: ..." -> rate).
func limitParam(msg string) string {
	p, _, _ := strings.Cut(strings.TrimPrefix(msg, "limits."), ":")
	p, _, _ = strings.Cut(p, " ")
	return p
}

func checkGlobs(field string, globs []string) *apiError {
	if len(globs) > maxGlobs {
		return badRequest(field, "too_many", fmt.Sprintf("%s holds at most %d model globs", field, maxGlobs))
	}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" || len(g) > maxGlobLen || !plainText(g) {
			return badRequest(field, "invalid_glob", fmt.Sprintf("%s: %s is not a model glob (path.Match syntax)", field, strconvQuote(clip(g, 64))))
		}
	}
	return nil
}

// ctxStore bounds one store call.
func ctxStore(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), storeTimeout)
}

// needStore refuses a change when no key store is configured.
func (h *Handler) needStore(w http.ResponseWriter, r *http.Request) bool {
	if h.keys == nil {
		h.fail(w, r, unavailable("no_key_store", "no key_store is configured, so keys cannot be issued or changed here (keys in config change with the config)"))
		return false
	}
	return true
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	var f keyFields
	if e := readBody(w, r, &f, false); e != nil {
		h.fail(w, r, e)
		return
	}
	if !h.needStore(w, r) {
		return
	}
	now := h.now().UTC()
	k := &keystore.Key{Created: now, CreatedBy: actor(p), Updated: now, UpdatedBy: actor(p), Version: 1}
	if p.Role == keystore.RoleTeamAdmin {
		if f.Team.set && f.Team.v != p.Team {
			h.fail(w, r, forbidden("other_team", "a team-admin makes keys of its own team ("+p.Team+") only"))
			return
		}
		k.Team = p.Team
	}
	if e := f.apply(h.cfg, k, now, true); e != nil {
		h.fail(w, r, e)
		return
	}
	if e := h.checkGrant(p, k); e != nil {
		h.fail(w, r, e)
		return
	}
	if e := h.configNameClash(k.Name); e != nil {
		h.fail(w, r, e)
		return
	}
	secret, hash := keystore.NewSecret()
	k.ID, k.Hash = keystore.NewID(), hash
	entry := h.entry(r, p, "key.create", k.ID, nil, k)
	ctx, cancel := ctxStore(r)
	defer cancel()
	if err := h.keys.Create(ctx, k, entry); err != nil {
		h.writeFailed(w, r, err)
		return
	}
	h.changed(r, entry)
	o := storedKeyJSON(k)
	o.Key = secret
	writeJSON(w, http.StatusCreated, o)
}

// configNameClash refuses a stored key the name of a config key: the two would be told
// apart only by id in every log and chart.
func (h *Handler) configNameClash(name string) *apiError {
	if _, ok := h.cfgKeys[name]; ok {
		return conflict("name_taken", "a key in the config is named "+name+"; give this key another name")
	}
	return nil
}

// writeFailed answers a store's refusal of a write.
func (h *Handler) writeFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, keystore.ErrNameTaken):
		h.fail(w, r, conflict("name_taken", "another live key has that name"))
	case errors.Is(err, keystore.ErrConflict):
		h.fail(w, r, conflict("version_conflict", "the key changed since it was read; read it again and retry"))
	case errors.Is(err, keystore.ErrExists):
		h.fail(w, r, conflict("exists", "a key with that id or secret exists; retry"))
	case errors.Is(err, keystore.ErrNotFound):
		h.fail(w, r, notFound("key_not_found", "no such key"))
	default:
		h.storeFailed(w, r, "key", err)
	}
}

func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request, p *Principal) {
	q, e := query(r, "team", "name", "q", "deleted", "after", "limit")
	if e != nil {
		h.fail(w, r, e)
		return
	}
	limit, e := pageLimit(q)
	if e != nil {
		h.fail(w, r, e)
		return
	}
	deleted, e := boolParam(q, "deleted")
	if e != nil {
		h.fail(w, r, e)
		return
	}
	team, name, after, search := q.Get("team"), q.Get("name"), q.Get("after"), strings.ToLower(q.Get("q"))
	switch {
	case after != "" && !validKeyID.MatchString(after):
		h.fail(w, r, badRequest("after", "invalid_cursor", "after is the next cursor of a previous page (a key id)"))
		return
	case p.Role == keystore.RoleTeamAdmin && team != "" && team != p.Team:
		h.fail(w, r, forbidden("other_team", "a team-admin sees its own team's keys ("+p.Team+") only"))
		return
	case p.Role == keystore.RoleTeamAdmin:
		team = p.Team
	}
	matches := func(o *keyObject) bool {
		return search == "" || strings.Contains(strings.ToLower(o.ID+"\x00"+o.Name+"\x00"+o.Team+"\x00"+o.Owner+"\x00"+o.Description), search)
	}
	data := []*keyObject{}
	// Config keys (no team) open the first page, read-only.
	if after == "" && team == "" {
		for i := range h.cfg.Keys {
			o := configKeyJSON(&h.cfg.Keys[i])
			if (name == "" || o.Name == name) && matches(o) {
				data = append(data, o)
			}
		}
	}
	next := ""
	if h.keys != nil {
		var err error
		next, err = h.scanKeys(r, keystore.Query{Team: team, Name: name, Deleted: deleted, After: after}, limit, func(k *keystore.Key) bool {
			o := storedKeyJSON(k)
			if !matches(o) {
				return false
			}
			data = append(data, o)
			return true
		})
		if err != nil {
			h.storeFailed(w, r, "key", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "next": next})
}

// maxScanPages bounds the store pages one list reads while filtering by q: a search that
// matches little answers a short page and a cursor, not an unbounded scan.
const maxScanPages = 10

// scanKeys reads store pages from q, handing each key to take, until take has accepted
// limit of them. It returns the cursor to continue from ("" at the end).
func (h *Handler) scanKeys(r *http.Request, q keystore.Query, limit int, take func(*keystore.Key) bool) (string, error) {
	taken := 0
	for range maxScanPages {
		q.Limit = limit
		ctx, cancel := ctxStore(r)
		page, err := h.keys.List(ctx, q)
		cancel()
		if err != nil {
			return "", err
		}
		for i, k := range page.Keys {
			if take(k) {
				taken++
			}
			if taken == limit {
				if i == len(page.Keys)-1 {
					return page.Next, nil
				}
				return k.ID, nil
			}
		}
		if page.Next == "" {
			return "", nil
		}
		q.After = page.Next
	}
	return q.After, nil
}

// loadKey reads the key a path names, as the caller may see it: a team-admin sees only its
// team's (any other is not found, so it learns nothing of other teams).
func (h *Handler) loadKey(w http.ResponseWriter, r *http.Request, p *Principal) *keystore.Key {
	id, e := keyID(r)
	if e != nil {
		h.fail(w, r, e)
		return nil
	}
	if h.keys == nil {
		h.fail(w, r, notFound("key_not_found", "no key "+id+" (no key_store is configured)"))
		return nil
	}
	ctx, cancel := ctxStore(r)
	defer cancel()
	k, err := h.keys.Get(ctx, id)
	switch {
	case errors.Is(err, keystore.ErrNotFound):
		h.fail(w, r, notFound("key_not_found", "no key "+id))
		return nil
	case err != nil:
		h.storeFailed(w, r, "key", err)
		return nil
	case p.Role == keystore.RoleTeamAdmin && k.Team != p.Team:
		h.fail(w, r, notFound("key_not_found", "no key "+id+" in team "+p.Team))
		return nil
	}
	return k
}

func (h *Handler) getKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	if k := h.loadKey(w, r, p); k != nil {
		writeJSON(w, http.StatusOK, storedKeyJSON(k))
	}
}

// change is what one write operation does to a loaded key; it answers an error to refuse.
type change func(k *keystore.Key) *apiError

// modify is the path of every change to a stored key: body, key, permission, the change,
// the bounds, one store write with its audit entry, the answer.
func (h *Handler) modify(w http.ResponseWriter, r *http.Request, p *Principal, action string, body any, version func() opt[int64], do change, answer func(*keystore.Key) *keyObject) {
	if e := readBody(w, r, body, action != "key.update"); e != nil {
		h.fail(w, r, e)
		return
	}
	if !h.needStore(w, r) {
		return
	}
	old := h.loadKey(w, r, p)
	if old == nil {
		return
	}
	switch v := version(); {
	case old.Deleted:
		h.fail(w, r, conflict("key_deleted", "key "+old.ID+" is deleted; a tombstone does not change"))
		return
	case v.set && (v.null || v.v != old.Version):
		h.fail(w, r, conflict("version_conflict", fmt.Sprintf("key %s is at version %d, not the version given", old.ID, old.Version)))
		return
	case p.Role == keystore.RoleTeamAdmin && old.Role != "":
		h.fail(w, r, forbidden("role_key", "a team-admin does not change keys that carry a role"))
		return
	}
	k := old.Clone()
	if e := do(k); e != nil {
		h.fail(w, r, e)
		return
	}
	if e := h.checkGrant(p, k); e != nil {
		h.fail(w, r, e)
		return
	}
	if k.Name != old.Name {
		if e := h.configNameClash(k.Name); e != nil {
			h.fail(w, r, e)
			return
		}
	}
	if same(old, k) {
		writeJSON(w, http.StatusOK, storedKeyJSON(old))
		return
	}
	now := h.now().UTC()
	k.Version, k.Updated, k.UpdatedBy = old.Version+1, now, actor(p)
	entry := h.entry(r, p, action, k.ID, old, k)
	ctx, cancel := ctxStore(r)
	defer cancel()
	if err := h.keys.Update(ctx, k, entry); err != nil {
		h.writeFailed(w, r, err)
		return
	}
	h.changed(r, entry)
	writeJSON(w, http.StatusOK, answer(k))
}

// same reports whether a change left the key as it was (nothing to write or audit).
func same(a, b *keystore.Key) bool {
	return string(auditJSON(a)) == string(auditJSON(b)) && a.Hash == b.Hash
}

func plain(k *keystore.Key) *keyObject { return storedKeyJSON(k) }

func (h *Handler) patchKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	var f keyFields
	h.modify(w, r, p, "key.update", &f, func() opt[int64] { return f.Version }, func(k *keystore.Key) *apiError {
		if p.Role == keystore.RoleTeamAdmin {
			if f.Team.set && f.Team.v != p.Team {
				return forbidden("other_team", "a team-admin keeps its keys in its own team ("+p.Team+")")
			}
		}
		return f.apply(h.cfg, k, h.now(), false)
	}, plain)
}

func (h *Handler) setDisabled(w http.ResponseWriter, r *http.Request, p *Principal, disabled bool, action string) {
	var b versionOnly
	h.modify(w, r, p, action, &b, func() opt[int64] { return b.Version }, func(k *keystore.Key) *apiError {
		k.Disabled = disabled
		return nil
	}, plain)
}

func (h *Handler) disableKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	h.setDisabled(w, r, p, true, "key.disable")
}

func (h *Handler) enableKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	h.setDisabled(w, r, p, false, "key.enable")
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	var b versionOnly
	var secret string
	h.modify(w, r, p, "key.rotate", &b, func() opt[int64] { return b.Version }, func(k *keystore.Key) *apiError {
		secret, k.Hash = keystore.NewSecret()
		return nil
	}, func(k *keystore.Key) *keyObject {
		o := storedKeyJSON(k)
		o.Key = secret
		return o
	})
}

func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request, p *Principal) {
	var b versionOnly
	h.modify(w, r, p, "key.delete", &b, func() opt[int64] { return b.Version }, func(k *keystore.Key) *apiError {
		k.Deleted = true
		return nil
	}, plain)
}

// actor is how the audit names a principal.
func actor(p *Principal) string {
	if strings.HasPrefix(p.ID, "oidc:") && p.Name != "" {
		return p.ID + " (" + p.Name + ")"
	}
	return p.ID
}

// entry is the audit entry of one change: before and after as the API shows them (no hash,
// no secret).
func (h *Handler) entry(r *http.Request, p *Principal, action, target string, before, after *keystore.Key) *keystore.Entry {
	return &keystore.Entry{ID: keystore.NewEntryID(), Time: h.now().UTC(), Actor: actor(p), Role: p.Role, Action: action,
		Target: target, Before: auditJSON(before), After: auditJSON(after), Request: requestID(r)}
}

// changed logs a change made: who did what to which, never a secret.
func (h *Handler) changed(r *http.Request, e *keystore.Entry) {
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "admin change", slog.String("request_id", e.Request),
		slog.String("action", e.Action), slog.String("target", e.Target), slog.String("actor", e.Actor), slog.String("role", e.Role),
		slog.String("audit_id", e.ID))
}
