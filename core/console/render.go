package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fngate/fngate/core/keystore"
)

//go:embed templates
var templateFS embed.FS

// pageNames are the templates under templates/, each drawn inside layout.html.
var pageNames = []string{"signin", "keys", "secret", "key", "routes", "audit", "error"}

type pages struct {
	t map[string]*template.Template
}

var funcs = template.FuncMap{
	"dict": func() map[string]string { return map[string]string{} },
	// limitsOf fills the limits fieldset from a key (blank where no limit is set).
	"limitsOf": func(k *keyJSON, perModel string) map[string]string {
		m := map[string]string{"per_model": perModel}
		set := func(name string, v float64) {
			if v > 0 {
				m[name] = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
		if r := k.Rate; r != nil {
			set("rpm", float64(r.RequestsPerMinute))
			set("tpm", float64(r.TokensPerMinute))
		}
		if b := k.Budget; b != nil {
			set("usd_day", b.USDPerDay)
			set("usd_month", b.USDPerMonth)
		}
		return m
	},
	"usd":   FormatUSD,
	"count": func(n int64) string { return formatCount(float64(n)) },
	"join":  strings.Join,
	"lines": func(s []string) string { return strings.Join(s, "\n") },
	"json": func(raw json.RawMessage) string {
		var b bytes.Buffer
		if len(raw) == 0 || string(raw) == "null" {
			return ""
		}
		if json.Indent(&b, raw, "", "  ") != nil {
			return string(raw)
		}
		return b.String()
	},
	"day": func(s string) string {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
		return s
	},
	"dateonly": func(s string) string {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t.UTC().Format(time.DateOnly)
		}
		return ""
	},
}

func parsePages() (*pages, error) {
	p := &pages{t: map[string]*template.Template{}}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	for _, name := range pageNames {
		// The layout is parsed once and cloned for each page, which defines its content.
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		p.t[name] = t
	}
	return p, nil
}

// view is what every page is drawn from: the page's own data, and who is signed in, which
// decides the navigation and which change forms are drawn at all.
type view struct {
	Title   string
	Page    string
	Session *Session
	Data    map[string]any
	Now     time.Time

	c   *Console
	sid string
}

// Token is the form token of a form posting to action, bound to this session.
func (v *view) Token(action string) string { return v.c.sign.formToken(v.sid, action, v.Now) }

// CanEditKeys: admins and team-admins change keys (the admin API still decides each).
func (v *view) CanEditKeys() bool {
	return v.Session != nil && (v.Session.Role == keystore.RoleAdmin || v.Session.Role == keystore.RoleTeamAdmin)
}

// CanRoutes: only admins cool and restore routes.
func (v *view) CanRoutes() bool { return v.Session != nil && v.Session.Role == keystore.RoleAdmin }

// IsAdmin: only admins name a key's team or give it a role.
func (v *view) IsAdmin() bool { return v.CanRoutes() }

var titles = map[string]string{"signin": "Sign in", "keys": "Keys", "secret": "Your new key", "key": "Key",
	"routes": "Routes", "audit": "Audit log", "error": "Error"}

func (c *Console) render(w http.ResponseWriter, r *http.Request, s *Session, status int, page string, data map[string]any) {
	sid := ""
	if s != nil {
		sid = s.SID
	}
	c.renderAs(w, r, s, sid, status, page, data)
}

// renderAs draws page; sid binds its forms' tokens (a session's, or "pre:" and the sign-in
// page's own).
func (c *Console) renderAs(w http.ResponseWriter, r *http.Request, s *Session, sid string, status int, page string, data map[string]any) {
	if s == nil && page != "signin" {
		sid = ""
	} else if s == nil {
		sid = "pre:" + sid
	}
	v := &view{Title: titles[page], Page: page, Session: s, Data: data, Now: c.now(), c: c, sid: sid}
	if t, ok := data["Title"].(string); ok {
		v.Title = t
	}
	var b bytes.Buffer
	if err := c.pages.t[page].Execute(&b, v); err != nil {
		c.log.Error("console: drawing a page failed", slog.String("page", page), slog.String("error", err.Error()))
		http.Error(w, "the console could not draw this page", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Pages hold keys' details and, once, a secret: no cache keeps them.
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
