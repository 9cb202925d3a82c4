package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Cookie names and lives.
const (
	sessionCookie = "fngate_console"
	loginCookie   = "fngate_console_login"
	// SessionTTL is how long a sign-in lasts. Eight hours is a working day: a person signs
	// in once a day, and a stolen cookie is worth at most that long. A key principal's
	// session ends sooner, on the first request after its key is revoked, disabled or
	// loses its role (each request re-reads the key); an OIDC principal's ends when it
	// expires, as the identity provider gives no cheap way to ask again per request.
	SessionTTL = 8 * time.Hour
	// loginTTL bounds the trip to the identity provider and back.
	loginTTL = 10 * time.Minute
	// formTTL is how long a page's forms may be submitted after it was drawn: long enough
	// to fill one in, short enough that a leaked token soon stops working.
	formTTL = 2 * time.Hour
	// maxCookie bounds what is parsed of a cookie; ours are well under it.
	maxCookie = 4096
)

// Session is who is signed in: the principal's id, name, role and team, never an admin key
// or a token. A key principal (Kind "key") is re-read from its source on every request.
type Session struct {
	SID     string `json:"sid"` // random: the forms' tokens are bound to it
	ID      string `json:"id"`
	Name    string `json:"name"`
	Role    string `json:"role"`
	Team    string `json:"team,omitempty"`
	Kind    string `json:"kind"` // key | oidc
	Expires int64  `json:"exp"`  // unix seconds
}

// login is what the sign-in with the identity provider must find again on its way back:
// the state and nonce it sent, the PKCE verifier, and where the person was going.
type login struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Return   string `json:"return,omitempty"`
	Expires  int64  `json:"exp"`
}

// signer signs and checks the console's cookies and form tokens. Each use has its own key,
// derived from the session key, so a value signed for one purpose is never accepted for
// another (a login cookie as a session, a form token as either).
type signer struct {
	session, login, form []byte
}

func newSigner(secret []byte) *signer {
	derive := func(purpose string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("fngate console " + purpose))
		return m.Sum(nil)
	}
	return &signer{session: derive("session"), login: derive("login"), form: derive("form")}
}

var errBadCookie = errors.New("console: cookie missing, tampered with or expired")

// seal returns v as JSON, base64url, a dot and its HMAC.
func seal(key []byte, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + mac(key, p), nil
}

// open checks a sealed value's HMAC (in constant time) and decodes it into v.
func open(key []byte, s string, v any) error {
	if len(s) > maxCookie {
		return errBadCookie
	}
	p, sig, ok := strings.Cut(s, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(mac(key, p))) {
		return errBadCookie
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || json.Unmarshal(b, v) != nil {
		return errBadCookie
	}
	return nil
}

func mac(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// session returns the request's valid, unexpired session.
func (s *signer) sessionOf(r *http.Request, now time.Time) (*Session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, errBadCookie
	}
	var ss Session
	if err := open(s.session, c.Value, &ss); err != nil {
		return nil, err
	}
	if ss.SID == "" || ss.ID == "" || now.Unix() >= ss.Expires {
		return nil, errBadCookie
	}
	return &ss, nil
}

// cookie makes one of the console's cookies: HttpOnly (no script reads it), Secure (never
// sent over plain HTTP; browsers make an exception for localhost, which make run and the
// tests use), SameSite=Lax (sent on the identity provider's redirect back, a top-level GET,
// which Strict would drop; never on a cross-site POST, and every POST carries a form token
// besides).
func cookie(name, value, path string, ttl time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode, MaxAge: int(ttl.Seconds())}
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// formToken binds a form to the session that drew it, the action it posts to and an
// expiry: a token from another form, another session or an old page is refused.
func (s *signer) formToken(sid, action string, now time.Time) string {
	exp := strconv.FormatInt(now.Add(formTTL).Unix(), 10)
	return exp + "." + mac(s.form, sid+"\n"+action+"\n"+exp)
}

// checkForm reports whether token is valid for the session and action at now.
func (s *signer) checkForm(token, sid, action string, now time.Time) bool {
	exp, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 256 {
		return false
	}
	t, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || now.Unix() >= t {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(mac(s.form, sid+"\n"+action+"\n"+exp)))
}

// random returns n random bytes, base64url.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}
