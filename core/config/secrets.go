package config

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// secretSchemes are the reference prefixes a value may use instead of a literal secret.
var secretSchemes = []string{"aws-sm", "gcp-sm"}

// IsSecretRef reports whether v is a secret reference such as aws-sm://name#key.
func IsSecretRef(v string) (scheme string, ok bool) {
	for _, s := range secretSchemes {
		if strings.HasPrefix(v, s+"://") {
			return s, true
		}
	}
	return "", false
}

// resolveSecrets replaces secret references with their values, once per distinct reference,
// and records every secret value so the logger can redact it.
func resolveSecrets(ctx context.Context, cfg *Config, resolvers map[string]SecretResolver, disabled map[string]bool) error {
	cache := map[string]string{}
	resolve := func(where string, v *string, isSecret bool) error {
		scheme, ok := IsSecretRef(*v)
		if ok {
			val, done := cache[*v]
			if !done {
				r := resolvers[scheme]
				if r == nil {
					return fmt.Errorf("%s: %s:// secret references need a %s resolver, which this platform does not provide", where, scheme, scheme)
				}
				var err error
				if val, err = r.Resolve(ctx, *v); err != nil {
					return fmt.Errorf("%s: resolving %s: %w", where, *v, err)
				}
				cache[*v] = val
			}
			*v = val
			isSecret = true
		}
		if isSecret {
			cfg.addSecret(*v)
		}
		return nil
	}
	for i := range cfg.Keys {
		if err := resolve(fmt.Sprintf("keys[%d].value", i), &cfg.Keys[i].Value, true); err != nil {
			return err
		}
		if err := resolve(fmt.Sprintf("keys[%d].sha256", i), &cfg.Keys[i].SHA256, false); err != nil {
			return err
		}
	}
	for name, c := range cfg.Connections {
		if disabled[name] {
			continue
		}
		if err := resolve("connections."+name+".api_key", &c.APIKey, true); err != nil {
			return err
		}
		cfg.addURLSecrets(c.BaseURL)
		for h, v := range c.Headers {
			if err := resolve("connections."+name+".headers."+h, &v, true); err != nil {
				return err
			}
			c.Headers[h] = v
		}
		for k, raw := range c.Extra {
			v, ok := raw.(string)
			if !ok {
				continue
			}
			if err := resolve("connections."+name+"."+k, &v, looksSecret(k)); err != nil {
				return err
			}
			c.Extra[k] = v
		}
	}
	return nil
}

func looksSecret(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"key", "token", "secret", "password", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// addSecret records v with every other spelling it takes where it might be echoed: URL-encoded
// (in a query string, a form or a path) and base64, standard and URL-safe, padded or not. In
// a longer base64 text (an HTTP basic-auth value "user:secret", a JSON document) v starts at
// any of three alignments; at each, the characters that depend on v alone are recorded too.
func (cfg *Config) addSecret(v string) {
	if v == "" {
		return
	}
	add := func(f string) {
		if !slices.Contains(cfg.Secrets, f) {
			cfg.Secrets = append(cfg.Secrets, f)
		}
	}
	add(v)
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(enc.EncodeToString([]byte(v)))
		raw := enc.WithPadding(base64.NoPadding)
		for align := range 3 {
			// align filler bytes before v: the first characters mix filler bits with v's
			// (align 1: two characters, align 2: three), and when v does not end a 3-byte
			// group its last character mixes in whatever follows.
			s := raw.EncodeToString(append(make([]byte, align), v...))
			lead := [3]int{0, 2, 3}[align]
			tail := 0
			if (align+len(v))%3 != 0 {
				tail = 1
			}
			if align == 0 {
				add(s) // v encoded alone, unpadded
			}
			if len(s) > lead+tail {
				add(s[lead : len(s)-tail])
			}
		}
	}
}

// addURLSecrets records the credentials a base_url may carry: the password of its user
// information, decoded and escaped (Go's HTTP client sends it as basic auth, so
// "user:password" is recorded too), and the values of query parameters that name a key, a
// token, a signature and the like (Azure's ?api-key=, Google's ?key=, a SAS ?sig=), decoded
// and as written.
func (cfg *Config) addURLSecrets(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return // not a URL: the provider refuses it
	}
	if pw, ok := u.User.Password(); ok {
		cfg.addSecret(pw)
		cfg.addSecret(u.User.Username() + ":" + pw)
		if _, written, ok := strings.Cut(u.User.String(), ":"); ok {
			cfg.addSecret(written)
		}
	}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		k, written, _ := strings.Cut(pair, "=")
		name, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(written)
		if err1 != nil || err2 != nil || !looksSecretParam(name) {
			continue
		}
		cfg.addSecret(v)
		cfg.addSecret(written)
	}
}

// looksSecretParam reports whether a query parameter carries a credential.
func looksSecretParam(name string) bool {
	n := strings.ToLower(name)
	return looksSecret(n) || strings.Contains(n, "auth") || n == "sig" || strings.Contains(n, "signature")
}
