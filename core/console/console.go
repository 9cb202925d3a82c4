package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/telemetry"
)

// Prefix is where the console is served.
const Prefix = "/console"

// maxForm bounds a form's body: the largest, a key's limits, is well under it.
const maxForm = 64 << 10

//go:embed static
var staticFS embed.FS

// Options wire a Console beyond the admin handler and the config.
type Options struct {
	// Keys is the key store the admin handler uses: a key principal's session is checked
	// against it on every request, so a revoked key's session ends at once. If nil, only
	// admin keys from config can sign in with a key.
	Keys keystore.Store
	// HTTPClient fetches the identity provider's discovery document and exchanges the
	// authorization code. If nil, http.DefaultClient is used.
	HTTPClient *http.Client
	// Now is the clock. If nil, time.Now is used.
	Now func() time.Time
	// Logger receives sign-ins, sign-outs and refusals. If nil, JSON to stdout.
	Logger *slog.Logger
}

// Console serves the web console. It is safe for concurrent use.
type Console struct {
	admin  http.Handler
	cfg    *config.Config
	keys   keystore.Store
	sign   *signer
	oidc   *oidcLogin // nil without admin.oidc or without admin.session_key
	now    func() time.Time
	log    *slog.Logger
	mux    *http.ServeMux
	pages  *pages
	static http.Handler
	csp    string
}

// New returns the console of cfg, which performs every operation through adminAPI (the
// handler admin.New returns) in process.
func New(adminAPI http.Handler, cfg *config.Config, opt Options) (*Console, error) {
	c := &Console{admin: adminAPI, cfg: cfg, keys: opt.Keys, now: opt.Now, log: opt.Logger}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(""), cfg.Secrets)
	}
	secret := cfg.Admin.SessionSecret
	if len(secret) == 0 {
		// Without a shared session key, sessions are this process's alone: fine for make
		// run; on the functions another instance would not know them (docs/console.md).
		secret = []byte(random(32))
	} else if cfg.Admin.OIDC != nil {
		c.oidc = newOIDCLogin(cfg.Admin.OIDC, opt.HTTPClient)
	}
	c.sign = newSigner(secret)
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = p
	sub, _ := fs.Sub(staticFS, "static")
	c.static = http.StripPrefix(Prefix+"/static/", http.FileServerFS(sub))
	formAction := "'self'"
	if c.oidc != nil {
		// Chromium applies form-action to the redirect that follows a form's POST: the
		// sign-in button's redirect to the identity provider must be allowed.
		if u, err := url.Parse(cfg.Admin.OIDC.Issuer); err == nil {
			formAction += " " + u.Scheme + "://" + u.Host
		}
	}
	c.csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"form-action " + formAction + "; frame-ancestors 'none'; base-uri 'none'"
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	m := http.NewServeMux()
	m.Handle("GET "+Prefix+"/static/", c.serveStatic())
	m.HandleFunc("GET "+Prefix, c.index)
	m.HandleFunc("GET "+Prefix+"/{$}", c.index)
	m.HandleFunc("GET "+Prefix+"/signin", c.signinPage)
	m.HandleFunc("POST "+Prefix+"/signin", c.signinKey)
	m.HandleFunc("POST "+Prefix+"/login", c.loginStart)
	m.HandleFunc("GET "+Prefix+"/callback", c.loginCallback)
	m.Handle("POST "+Prefix+"/logout", c.signedIn(c.logout))
	m.Handle("GET "+Prefix+"/keys", c.signedIn(c.keysPage))
	m.Handle("POST "+Prefix+"/keys", c.signedIn(c.createKey))
	m.Handle("GET "+Prefix+"/keys/{id}", c.signedIn(c.keyPage))
	m.Handle("POST "+Prefix+"/keys/{id}/{op}", c.signedIn(c.keyOp))
	m.Handle("GET "+Prefix+"/routes", c.signedIn(c.routesPage))
	m.Handle("POST "+Prefix+"/routes/{op}", c.signedIn(c.routeOp))
	m.Handle("GET "+Prefix+"/audit", c.signedIn(c.auditPage))
	m.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, http.StatusNotFound, "There is no console page at "+r.URL.Path+".")
	})
	c.mux = m
}

// ServeHTTP serves one console request.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", c.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// No page's address (a key's id, a search) leaves for another site.
	h.Set("Referrer-Policy", "no-referrer")
	if r.Method == http.MethodPost {
		// A form from another site never reaches a handler, whatever its token: the
		// browser names the site a POST came from (Sec-Fetch-Site, else Origin).
		if !sameOrigin(r) {
			c.fail(w, r, nil, http.StatusForbidden, "This form was sent from another site, and is refused.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) serveStatic() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			// The assets are named by the pages; no listing of them.
			c.fail(w, r, nil, http.StatusNotFound, "There is no console page at "+r.URL.Path+".")
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		c.static.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether a POST came from the console's own pages. Browsers send
// Sec-Fetch-Site (and Origin) with every POST; a client that sends neither (curl, a test)
// is no browser being tricked, and still needs a session and a form token.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// handler is a page or an action for a signed-in principal.
type handler func(w http.ResponseWriter, r *http.Request, s *Session, p *admin.Principal)

// signedIn checks the session cookie (and, for a key principal, that its key still
// signs in), and for a POST the form's token, before h runs. A GET with no valid session
// goes to the sign-in page; a POST without one is a 403, as is one whose token is missing,
// expired, or another form's or another session's.
func (c *Console) signedIn(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := c.now()
		s, err := c.sign.sessionOf(r, now)
		var p *admin.Principal
		if err == nil {
			p, err = c.principal(r.Context(), s)
		}
		if err != nil {
			http.SetCookie(w, cookie(sessionCookie, "", Prefix, 0))
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"/signin?return="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.fail(w, r, nil, http.StatusForbidden, "Your session has ended: sign in again.")
			return
		}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				c.fail(w, r, s, http.StatusBadRequest, "The form could not be read.")
				return
			}
			if !c.sign.checkForm(r.PostForm.Get("csrf"), s.SID, r.URL.Path, now) {
				c.log.Warn("console: form token refused", slog.String("path", r.URL.Path), slog.String("principal", s.ID))
				c.fail(w, r, s, http.StatusForbidden, "This form has expired or was not drawn by this console for you: reload the page and try again.")
				return
			}
		}
		h(w, r, s, p)
	})
}

var errSignedOut = errors.New("console: the principal can no longer sign in")

// principal is the admin principal a session stands for. An OIDC session is taken as it
// was signed (its role was mapped at sign-in, and it lasts at most SessionTTL). A key
// session is read again from the key's source each time: a stored key that is deleted,
// disabled, expired or has lost its role ends the session, and a team-admin's own limits,
// which bound what it grants, are the key's current ones.
func (c *Console) principal(ctx context.Context, s *Session) (*admin.Principal, error) {
	if s.Kind != "key" {
		return &admin.Principal{ID: s.ID, Name: s.Name, Role: s.Role, Team: s.Team}, nil
	}
	ref := strings.TrimPrefix(s.ID, "key:")
	if strings.HasPrefix(ref, keystore.IDPrefix) {
		if c.keys == nil {
			return nil, errSignedOut
		}
		k, err := c.keys.Get(ctx, ref)
		if err != nil || !k.Usable(c.now()) || k.Role == "" {
			return nil, errSignedOut
		}
		p := &admin.Principal{ID: s.ID, Name: k.Name, Role: k.Role, Team: k.Team}
		if k.Role == keystore.RoleTeamAdmin {
			// As the admin API has it for a bearer key: its own limits, key_defaults filled in.
			own := k.Clone().Key
			own.KeyLimits = c.cfg.KeyLimitsOf(&own)
			p.Key = &own
		}
		return p, nil
	}
	for _, ak := range c.cfg.Admin.Keys {
		if ak.Name == ref {
			return &admin.Principal{ID: s.ID, Name: ak.Name, Role: ak.Role}, nil
		}
	}
	return nil, errSignedOut
}

// startSession signs p in: a new session id (so no token drawn before the sign-in works
// after it) in a cookie that lasts SessionTTL.
func (c *Console) startSession(w http.ResponseWriter, m *me, kind string) error {
	if m.ID == "" || m.Role == "" {
		return fmt.Errorf("console: the admin API answered no principal")
	}
	s := Session{SID: random(16), ID: m.ID, Name: m.Name, Role: m.Role, Team: m.Team, Kind: kind,
		Expires: c.now().Add(SessionTTL).Unix()}
	v, err := seal(c.sign.session, s)
	if err != nil {
		return err
	}
	http.SetCookie(w, cookie(sessionCookie, v, Prefix, SessionTTL))
	c.log.Info("console: signed in", slog.String("principal", m.ID), slog.String("role", m.Role), slog.String("with", kind))
	return nil
}

func (c *Console) index(w http.ResponseWriter, r *http.Request) {
	if _, err := c.sign.sessionOf(r, c.now()); err != nil {
		http.Redirect(w, r, Prefix+"/signin", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"/keys", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *Session, _ *admin.Principal) {
	http.SetCookie(w, cookie(sessionCookie, "", Prefix, 0))
	c.log.Info("console: signed out", slog.String("principal", s.ID))
	http.Redirect(w, r, Prefix+"/signin?out=1", http.StatusSeeOther)
}

// fail answers an error page with status and a message for a person (never an internal
// error's text, which could carry what is not theirs to see).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *Session, status int, msg string) {
	c.render(w, r, s, status, "error", map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg})
}

// failAPI answers an admin API refusal with its status and message, and anything else
// (the admin handler's answer unreadable) as a 502 whose detail goes to the log only.
func (c *Console) failAPI(w http.ResponseWriter, r *http.Request, s *Session, err error) {
	var e *apiError
	if errors.As(err, &e) {
		c.fail(w, r, s, e.Status, e.Message)
		return
	}
	c.log.Error("console: admin call failed", slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	c.fail(w, r, s, http.StatusBadGateway, "The admin API's answer could not be read; the log has the detail.")
}

// Beside returns a handler that serves the console under /console and everything else with
// next: the admin API on the control-plane function, the admin API and the gateway on the
// local server.
func (c *Console) Beside(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Prefix || strings.HasPrefix(r.URL.Path, Prefix+"/") {
			c.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
