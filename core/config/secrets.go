package config

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The secret reference schemes, the keys of Options.Secrets.
const (
	SchemeAWS = "aws-sm" // AWS Secrets Manager
	SchemeGCP = "gcp-sm" // Google Cloud Secret Manager
)

// SecretRef is a parsed secret reference.
type SecretRef struct {
	Scheme string // SchemeAWS or SchemeGCP
	// Name is what the scheme's API is asked for: a secret name or ARN (aws-sm), or a secret
	// version's resource name, projects/P/secrets/S/versions/V (gcp-sm; the version is
	// "latest" when the reference leaves it out).
	Name string
	// Key picks one key of a secret that holds a JSON object; "" means the whole secret.
	Key string
}

// The shapes a reference may take, quoted in refusals.
const (
	awsShape = "write aws-sm://<name or ARN>[#json-key]"
	gcpShape = "write gcp-sm://projects/<project>/secrets/<secret>[/versions/<version>][#json-key]"
)

// ParseSecretRef reads v as a secret reference:
//
//	aws-sm://<secret name or ARN>[#json-key]
//	gcp-sm://projects/<project>/secrets/<secret>[/versions/<version>][#json-key]
//
// ok is false for a value that is not written as one (a literal key). A value that starts
// like one (aws-sm: or gcp-sm: in any case, with or without the slashes, or a bare Secrets
// Manager ARN) but has none of these shapes is an error: sent on as it is, it would reach a
// provider as its API key.
func ParseSecretRef(v string) (ref SecretRef, ok bool, err error) {
	lower := strings.ToLower(strings.TrimSpace(v))
	switch {
	case strings.HasPrefix(lower, SchemeAWS+":"):
		ref.Scheme = SchemeAWS
	case strings.HasPrefix(lower, SchemeGCP+":"):
		ref.Scheme = SchemeGCP
	case strings.HasPrefix(lower, "arn:") && strings.Contains(lower, ":secretsmanager:"):
		return ref, true, errors.New("a Secrets Manager ARN needs the aws-sm:// prefix to be resolved: " + awsShape)
	default:
		return ref, false, nil
	}
	shape := map[string]string{SchemeAWS: awsShape, SchemeGCP: gcpShape}[ref.Scheme]
	body, found := strings.CutPrefix(v, ref.Scheme+"://")
	if !found {
		return ref, true, fmt.Errorf("%s references start with exactly %q: %s", ref.Scheme, ref.Scheme+"://", shape)
	}
	name, key, hasKey := strings.Cut(body, "#")
	if hasKey && key == "" {
		return ref, true, fmt.Errorf("%s reference has an empty JSON key after '#': %s", ref.Scheme, shape)
	}
	if strings.ContainsFunc(key, isControl) {
		return ref, true, fmt.Errorf("%s reference has a control character in its JSON key", ref.Scheme)
	}
	ref.Key = key
	if ref.Scheme == SchemeAWS {
		ref.Name, err = awsSecretID(name)
	} else {
		ref.Name, err = gcpSecretVersion(name)
	}
	if err != nil {
		return ref, true, fmt.Errorf("%s reference %w: %s", ref.Scheme, err, shape)
	}
	return ref, true, nil
}

// awsSecretID checks a Secrets Manager secret id: a name of 1 to 512 of the characters the
// service allows, or a secret's ARN.
func awsSecretID(id string) (string, error) {
	if id == "" {
		return "", errors.New("names no secret")
	}
	if rest, isARN := strings.CutPrefix(id, "arn:"); isARN {
		// arn:<partition>:secretsmanager:<region>:<account>:secret:<name>
		f := strings.SplitN(rest, ":", 6)
		if len(f) != 6 || !strings.HasPrefix(f[0], "aws") || f[1] != "secretsmanager" || f[2] == "" ||
			len(f[3]) != 12 || strings.Trim(f[3], "0123456789") != "" || f[4] != "secret" || !awsSecretName(f[5]) {
			return "", errors.New("names an ARN that is not a Secrets Manager secret's (arn:aws:secretsmanager:<region>:<account>:secret:<name>)")
		}
		return id, nil
	}
	if !awsSecretName(id) {
		return "", errors.New("names a secret with characters Secrets Manager does not allow (letters, digits and /_+=.@-)")
	}
	return id, nil
}

func awsSecretName(s string) bool {
	return s != "" && len(s) <= 512 && onlyChars(s, "/_+=.@-")
}

// gcpSecretVersion returns the version resource name a Secret Manager reference body names.
func gcpSecretVersion(name string) (string, error) {
	p := strings.Split(name, "/")
	switch {
	case len(p) >= 3 && p[0] == "projects" && p[2] == "locations":
		return "", errors.New("names a regional secret (projects/<p>/locations/...), which is not supported; use a global secret")
	case len(p) != 4 && len(p) != 6, p[0] != "projects", p[2] != "secrets", len(p) == 6 && p[4] != "versions":
		return "", errors.New("is not a secret's resource name")
	case p[1] == "" || !onlyChars(p[1], ".:-"):
		return "", errors.New("names a malformed project")
	case p[3] == "" || len(p[3]) > 255 || !onlyChars(p[3], "_-"):
		return "", errors.New("names a malformed secret (letters, digits, '_' and '-')")
	case len(p) == 4:
		return name + "/versions/latest", nil
	case p[5] == "" || !onlyChars(p[5], "_-"):
		return "", errors.New("names a malformed version (a number, latest or an alias)")
	}
	return name, nil
}

// onlyChars reports whether s holds only ASCII letters, digits and the given extra characters.
func onlyChars(s, extra string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(extra, r)) {
			return false
		}
	}
	return true
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// resolveSecrets replaces secret references with their values, once per distinct reference,
// and records every secret value so the logger can redact it.
func resolveSecrets(ctx context.Context, cfg *Config, opt *Options, disabled map[string]bool) error {
	resolvers := opt.Secrets
	cache := map[string]string{}
	resolve := func(where string, v *string, isSecret bool) error {
		ref, ok, err := ParseSecretRef(*v)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Locate(where), err)
		}
		if ok {
			val, done := cache[*v]
			if !done {
				r := resolvers[ref.Scheme]
				if r == nil {
					return fmt.Errorf("%s: %s:// secret references need a %s resolver, which this platform does not provide", cfg.Locate(where), ref.Scheme, ref.Scheme)
				}
				if val, err = r.Resolve(ctx, *v); err != nil {
					return fmt.Errorf("%s: resolving %s: %w", cfg.Locate(where), *v, err)
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
	for i := range cfg.Responses.CompactionKeys {
		if err := resolve(fmt.Sprintf("responses.compaction_keys[%d].key", i), &cfg.Responses.CompactionKeys[i].Key, true); err != nil {
			return err
		}
	}
	for i := range cfg.Admin.Keys {
		if err := resolve(fmt.Sprintf("admin.keys[%d].value", i), &cfg.Admin.Keys[i].Value, true); err != nil {
			return err
		}
		if err := resolve(fmt.Sprintf("admin.keys[%d].sha256", i), &cfg.Admin.Keys[i].SHA256, false); err != nil {
			return err
		}
	}
	if err := resolve("admin.session_key", &cfg.Admin.SessionKey, true); err != nil {
		return err
	}
	if o := cfg.Admin.OIDC; o != nil {
		if err := resolve("admin.oidc.client_secret", &o.ClientSecret, true); err != nil {
			return err
		}
	}
	for name, s := range cfg.MCPServers {
		if s == nil || opt.WithoutMCP {
			continue
		}
		p := "mcp_servers." + name
		for h, v := range s.Headers { // static credentials, as a rule
			if err := resolve(p+".headers."+h, &v, true); err != nil {
				return err
			}
			s.Headers[h] = v
		}
		if err := resolve(p+".bearer_token", &s.BearerToken, true); err != nil {
			return err
		}
		if o := s.OAuth; o != nil {
			if err := resolve(p+".oauth.client_secret", &o.ClientSecret, true); err != nil {
				return err
			}
		}
		cfg.addURLSecrets(s.URL)
	}
	if o := cfg.Telemetry.OTLP; o != nil {
		for h, v := range o.Headers { // a vendor's API key, as a rule
			if err := resolve("telemetry.otlp.headers."+h, &v, true); err != nil {
				return err
			}
			o.Headers[h] = v
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
