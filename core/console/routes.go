package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fngate/fngate/core/admin"
)

// routesPage shows every route's state: active, cooled (until when, why, by whom: by hand,
// self-repair, or a provider's incident) or disabled, and its remediation records.
func (c *Console) routesPage(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	var page struct {
		Data []*routeJSON `json:"data"`
	}
	if err := c.call(r.Context(), p, http.MethodGet, "/admin/v1/routes", nil, nil, &page); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	c.render(w, r, s, http.StatusOK, "routes", map[string]any{"Routes": page.Data, "Done": doneMessage(r.URL.Query().Get("done"))})
}

// routeOp cools or restores a route by hand; self-repair then leaves it as it was set. The
// route's id travels in the form (it holds slashes: <model>/<index>).
func (c *Console) routeOp(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	op := r.PathValue("op")
	id := strings.TrimSpace(r.PostForm.Get("id"))
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	if id == "" || len(id) > 500 || len(reason) > 500 {
		c.fail(w, r, s, http.StatusBadRequest, "Name a route (and a reason of at most 500 characters).")
		return
	}
	body := map[string]any{}
	if reason != "" {
		body["reason"] = reason
	}
	switch op {
	case "cool":
		d, err := time.ParseDuration(strings.TrimSpace(r.PostForm.Get("for")))
		if err != nil || d <= 0 {
			c.fail(w, r, s, http.StatusBadRequest, "Cool for a duration such as 15m or 2h.")
			return
		}
		body["for"] = d.String()
	case "restore":
	default:
		c.fail(w, r, s, http.StatusNotFound, "There is no such change of a route.")
		return
	}
	if err := c.call(r.Context(), p, http.MethodPost, "/admin/v1/routes/"+url.PathEscape(id)+"/"+op, nil, body, nil); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"/routes?done="+op, http.StatusSeeOther)
}

// auditPage shows the audit log, newest first, a page at a time, optionally about one
// key or route.
func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal) {
	in := r.URL.Query()
	q := url.Values{"limit": {"50"}}
	for _, f := range []string{"target", "after"} {
		if v := strings.TrimSpace(in.Get(f)); v != "" {
			q.Set(f, limit(v, 500))
		}
	}
	var page struct {
		Data []*auditJSON `json:"data"`
		Next string       `json:"next"`
	}
	if err := c.call(r.Context(), p, http.MethodGet, "/admin/v1/audit", q, nil, &page); err != nil {
		c.failAPI(w, r, s, err)
		return
	}
	next := ""
	if page.Next != "" {
		n := url.Values{"after": {page.Next}}
		if t := q.Get("target"); t != "" {
			n.Set("target", t)
		}
		next = Prefix + "/audit?" + n.Encode()
	}
	c.render(w, r, s, http.StatusOK, "audit", map[string]any{"Entries": page.Data, "Next": next, "Target": q.Get("target")})
}
