package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func sessionRequest(t *testing.T, value string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/console/keys", nil)
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
	return r
}

func TestSessionCookie(t *testing.T) {
	s := newSigner([]byte("0123456789abcdef0123456789abcdef"))
	good := Session{SID: "sid", ID: "key:ops", Name: "ops", Role: "admin", Kind: "key", Expires: t0.Add(time.Hour).Unix()}
	sealed, err := seal(s.session, good)
	if err != nil {
		t.Fatal(err)
	}
	payload, sig, _ := strings.Cut(sealed, ".")
	forged := good
	forged.Role = "admin"
	forged.ID = "key:someone-else"
	forgedSealed, _ := seal([]byte("another key, another console!!!!"), forged)
	asLogin, _ := seal(s.login, good)
	expired, _ := seal(s.session, Session{SID: "sid", ID: "key:ops", Role: "admin", Kind: "key", Expires: t0.Unix()})
	flip := []byte(payload)
	flip[3] ^= 1
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"valid", sealed, true},
		{"payload changed", string(flip) + "." + sig, false},
		{"signature changed", payload + "." + sig[:len(sig)-2] + "AA", false},
		{"no signature", payload, false},
		{"signed with another key", forgedSealed, false},
		{"the login cookie's signature", asLogin, false},
		{"expired", expired, false},
		{"empty", "", false},
		{"huge", strings.Repeat("a", maxCookie+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.sessionOf(sessionRequest(t, tc.value), t0)
			if (err == nil) != tc.ok {
				t.Fatalf("sessionOf: %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && *got != good {
				t.Errorf("got %+v, want %+v", got, good)
			}
		})
	}
}

func TestFormToken(t *testing.T) {
	s := newSigner([]byte("0123456789abcdef0123456789abcdef"))
	other := newSigner([]byte("fedcba9876543210fedcba9876543210"))
	tok := s.formToken("sid-1", "/console/keys", t0)
	for _, tc := range []struct {
		name, token, sid, action string
		at                       time.Time
		ok                       bool
	}{
		{"valid", tok, "sid-1", "/console/keys", t0.Add(time.Minute), true},
		{"another session", tok, "sid-2", "/console/keys", t0, false},
		{"another form", tok, "sid-1", "/console/keys/key_x/delete", t0, false},
		{"expired", tok, "sid-1", "/console/keys", t0.Add(formTTL), false},
		{"expiry moved", strings.Replace(tok, tok[:10], "9999999999", 1), "sid-1", "/console/keys", t0, false},
		{"another console's", other.formToken("sid-1", "/console/keys", t0), "sid-1", "/console/keys", t0, false},
		{"empty", "", "sid-1", "/console/keys", t0, false},
		{"garbage", "abc", "sid-1", "/console/keys", t0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.checkForm(tc.token, tc.sid, tc.action, tc.at); got != tc.ok {
				t.Errorf("checkForm = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestCookieAttributes(t *testing.T) {
	c := cookie(sessionCookie, "v", "/console", SessionTTL)
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/console" || c.MaxAge != int(SessionTTL.Seconds()) {
		t.Errorf("session cookie %+v: want HttpOnly, Secure, SameSite=Lax, Path=/console, Max-Age 8h", c)
	}
	if c := cookie(sessionCookie, "", "/console", 0); c.MaxAge >= 0 {
		t.Errorf("a cleared cookie must expire at once: MaxAge %d", c.MaxAge)
	}
}
func TestSafeReturn(t *testing.T) {
	for in, want := range map[string]string{
		"/console/keys/key_abc?group=month": "/console/keys/key_abc?group=month",
		"https://evil.example/":             "/console/keys",
		"//evil.example/console/":           "/console/keys",
		"/console/\\evil":                   "/console/keys",
		"/consolex":                         "/console/keys",
		"/console/signin?return=x":          "/console/keys",
		"":                                  "/console/keys",
	} {
		if got := safeReturn(in); got != want {
			t.Errorf("safeReturn(%q) = %q, want %q", in, got, want)
		}
	}
}
