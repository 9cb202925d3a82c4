package oidcfake_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/fngate/fngate/internal/oidcfake"
)

// signIn follows the authorization request without a browser: the redirect back is where it
// stops.
func signIn(t *testing.T, authURL string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %s", resp.Status)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestCodeFlowWithPKCE signs in as a relying party does, with golang.org/x/oauth2 and
// go-oidc: the code, the exchange with the verifier, the ID token verified with its nonce.
func TestCodeFlowWithPKCE(t *testing.T) {
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: "console", ClientSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer iss.Close()
	iss.SetUser(oidcfake.Claims{"sub": "u-42", "email": "ana@example.com", "hd": "example.com"})
	ctx := context.Background()
	p, err := oidc.NewProvider(ctx, iss.URL)
	if err != nil {
		t.Fatal(err)
	}
	conf := &oauth2.Config{ClientID: "console", ClientSecret: "s3cret", Endpoint: p.Endpoint(),
		RedirectURL: "http://127.0.0.1:9/console/callback", Scopes: []string{oidc.ScopeOpenID, "email"}}
	verifier := oauth2.GenerateVerifier()
	back := signIn(t, conf.AuthCodeURL("st4te", oauth2.S256ChallengeOption(verifier), oidc.Nonce("n0nce")))
	if back.Get("state") != "st4te" || back.Get("code") == "" {
		t.Fatalf("redirect back: %v", back)
	}
	code := back.Get("code")

	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption("not-the-verifier-"+verifier)); err == nil {
		t.Fatal("a wrong verifier was accepted")
	}
	// The failed attempt spent the code: a second sign-in gets a fresh one.
	back = signIn(t, conf.AuthCodeURL("st4te", oauth2.S256ChallengeOption(verifier), oidc.Nonce("n0nce")))
	tok, err := conf.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := p.Verifier(&oidc.Config{ClientID: "console"}).Verify(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Email, HD, Nonce string }
	if err := idt.Claims(&c); err != nil || idt.Subject != "u-42" || c.Email != "ana@example.com" || c.HD != "example.com" || c.Nonce != "n0nce" {
		t.Fatalf("claims %+v sub %s, %v", c, idt.Subject, err)
	}
	if _, err := conf.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a code was redeemed twice")
	}
}

func TestAuthorizeRefuses(t *testing.T) {
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: "console"})
	if err != nil {
		t.Fatal(err)
	}
	defer iss.Close()
	base := iss.URL + "/authorize?response_type=code&client_id=console&scope=openid&redirect_uri=" + url.QueryEscape("http://127.0.0.1:9/cb")
	for _, tc := range []struct {
		name, url, want string
	}{
		{"no PKCE", base, "invalid_request"},
		{"plain PKCE", base + "&code_challenge=abc&code_challenge_method=plain", "invalid_request"},
		{"no openid scope", strings.Replace(base, "scope=openid", "scope=email", 1) + "&code_challenge=abc&code_challenge_method=S256", "invalid_scope"},
	} {
		if got := signIn(t, tc.url).Get("error"); got != tc.want {
			t.Errorf("%s: error %q, want %q", tc.name, got, tc.want)
		}
	}
	iss.SetUser(nil)
	if got := signIn(t, base+"&code_challenge=abc&code_challenge_method=S256").Get("error"); got != "access_denied" {
		t.Errorf("no user: error %q", got)
	}
	resp, err := http.Get(strings.Replace(base, "127.0.0.1%3A9", "evil.example.com", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a foreign redirect_uri: %s", resp.Status)
	}
}
