package config

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// KeyStore is where keys issued at runtime live (core/keystore), shared by every instance;
// the keys in config stay beside them. Absent (no store), keys come from config alone.
type KeyStore struct {
	// Store is memory (one process: make run, tests), file, dynamodb or firestore. An empty
	// kind is the platform's (DynamoDB on Lambda when KEYS_TABLE is set, Firestore on Cloud
	// Functions when KEYS_PROJECT is), else none.
	Store `yaml:",inline"`
	// StaleFor is how long the keys an instance has cached keep working while the store
	// cannot be reached (DefaultKeysStaleFor when 0); keys it has not seen fail closed.
	StaleFor Duration `yaml:"stale_for"`
	Region   string   `yaml:"region"`   // dynamodb
	Endpoint string   `yaml:"endpoint"` // dynamodb: an endpoint override (tests)
}

// Named reports whether the config names a key store (store: memory, file, dynamodb or
// firestore), whose keys the gateway serves beside those in config.
func (k *KeyStore) Named() bool { return k.Kind != "" && k.Kind != StoreNone }

// Key store defaults.
const (
	DefaultKeysStaleFor = 15 * time.Minute
	// DefaultKeysFile is the file store's path when path is not given.
	DefaultKeysFile = ".fngate/keys.json"
	// DefaultKeysCollection is the Firestore collection when collection is not given.
	DefaultKeysCollection = "fngate_keys"
)

var keyStoreSection = storeSection{
	name:  "key_store",
	kinds: []string{StoreMemory, StoreFile, StoreDynamoDB, StoreFirestore, StoreNone},
	settings: []storeSetting{{StoreFile, "path"}, {StoreDynamoDB, "table"}, {StoreDynamoDB, "region"}, {StoreDynamoDB, "endpoint"},
		{StoreFirestore, "project"}, {StoreFirestore, "database"}, {StoreFirestore, "collection"}},
	platform: []string{StoreDynamoDB, StoreFirestore},
	own:      []string{"stale_for"},
	timeout:  DefaultStoreTimeout,
}

func (k *KeyStore) validate(bad *problems) {
	k.Store.validate(bad, &keyStoreSection, map[string]string{"region": k.Region, "endpoint": k.Endpoint})
	switch t := k.StaleFor.D(); {
	case t == 0:
		k.StaleFor = Duration(DefaultKeysStaleFor)
	case t < time.Second || t > 24*time.Hour:
		bad.add("key_store.stale_for", " must be from 1s to 24h, got %v", t)
	}
}

// Admin configures the control plane: the admin API under /admin/v1/ and the console at
// /console. Its principals are admin keys (here, or stored keys with a role) and the
// organisation's identity provider (OIDC).
type Admin struct {
	Keys []AdminKey `yaml:"keys"`
	OIDC *OIDC      `yaml:"oidc"`
	// SessionKey signs the console's session cookies and its forms' tokens: base64 of 32
	// bytes, shared by every instance (a secret reference, ${ENV}, aws-sm:// or gcp-sm://).
	// Without it the console takes no OIDC sign-in; the admin API still takes bearer tokens.
	SessionKey string `yaml:"session_key"`
	// CORSOrigins, when set, are the only origins whose browsers may call the admin API from
	// another site; none (the default) sends no CORS headers at all.
	CORSOrigins []string `yaml:"cors_origins"`

	// SessionSecret is SessionKey decoded.
	SessionSecret []byte `yaml:"-"`
}

// AdminKey is an admin principal's bearer key (break-glass, automation).
type AdminKey struct {
	Name   string `yaml:"name"`
	SHA256 string `yaml:"sha256"`
	Value  string `yaml:"value"`
	Role   string `yaml:"role"` // admin | viewer

	Hash [32]byte `yaml:"-"`
}

// OIDC is the organisation's identity provider: the console signs in with it (authorization
// code with PKCE) and the admin API takes its ID tokens as bearer tokens. Roles map the
// token's claims to admin or viewer: groups where the provider sends them (Okta, Entra ID,
// Cognito, Keycloak), else emails and, for Google Workspace, the hosted domain (hd).
type OIDC struct {
	Issuer       string `yaml:"issuer"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"` // for providers that require one of a web client (Google)
	// RedirectURL is the console's callback as the provider has it registered
	// (https://<control plane>/console/callback); empty derives it from the request.
	RedirectURL string `yaml:"redirect_url"`
	// Scopes beyond openid (default: email, profile; add groups where the provider needs it).
	Scopes []string              `yaml:"scopes"`
	Roles  map[string]*RoleClaim `yaml:"roles"` // admin, viewer
	// GroupsClaim names the claim that lists groups (default groups).
	GroupsClaim string `yaml:"groups_claim"`
}

// RoleClaim grants a role to a token that matches any of its lists.
type RoleClaim struct {
	Emails []string `yaml:"emails"`
	Groups []string `yaml:"groups"`
	HD     []string `yaml:"hd"`
}

// Admin roles a principal may have.
const (
	AdminRoleAdmin  = "admin"
	AdminRoleViewer = "viewer"
)

func (a *Admin) validate(bad *problems) {
	seen := map[string]bool{}
	owner := map[[sha256.Size]byte]int{}
	for i := range a.Keys {
		k := &a.Keys[i]
		p := fmt.Sprintf("admin.keys[%d]", i)
		switch {
		case k.Name == "":
			bad.add(p+".name", " is required")
		case seen[k.Name]:
			bad.add(p+".name", " %q is used twice", k.Name)
		}
		seen[k.Name] = true
		if k.Role != AdminRoleAdmin && k.Role != AdminRoleViewer {
			bad.add(p+".role", " must be admin or viewer, got %q", k.Role)
		}
		field := p + ".sha256"
		switch {
		case (k.SHA256 == "") == (k.Value == ""):
			bad.add(p, ": give exactly one of sha256 and value")
			continue
		case k.Value != "":
			field = p + ".value"
			k.Hash = sha256.Sum256([]byte(k.Value))
			k.Value = ""
		default:
			raw, err := hex.DecodeString(strings.TrimSpace(k.SHA256))
			if err != nil || len(raw) != sha256.Size {
				bad.add(field, " must be 64 hexadecimal characters")
				continue
			}
			copy(k.Hash[:], raw)
		}
		if first, dup := owner[k.Hash]; dup {
			bad.add(field, " is the secret of admin.keys[%d] too: give each admin key its own secret", first)
		}
		owner[k.Hash] = i
	}
	if a.SessionKey != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a.SessionKey))
		if err != nil || len(b) != 32 {
			bad.add("admin.session_key", " must be base64 of 32 random bytes (openssl rand -base64 32)")
		}
		a.SessionSecret = b
	}
	for i, o := range a.CORSOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || o == "*" {
			bad.add(fmt.Sprintf("admin.cors_origins[%d]", i), ": an origin is scheme://host[:port] (no *, no path), got %q", o)
		}
	}
	if o := a.OIDC; o != nil {
		if u, err := url.Parse(o.Issuer); err != nil || u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) || u.Host == "" {
			bad.add("admin.oidc.issuer", " must be the issuer's https URL (http only on loopback, for tests), got %q", o.Issuer)
		}
		if o.ClientID == "" {
			bad.add("admin.oidc.client_id", " is required: the console's client id, which tokens must be issued to (their audience)")
		}
		if o.RedirectURL != "" {
			if u, err := url.Parse(o.RedirectURL); err != nil || u.Host == "" {
				bad.add("admin.oidc.redirect_url", " must be an absolute URL, got %q", o.RedirectURL)
			}
		}
		for role, rc := range o.Roles {
			if role != AdminRoleAdmin && role != AdminRoleViewer {
				bad.add("admin.oidc.roles."+role, ": the roles are admin and viewer")
			}
			if rc == nil || len(rc.Emails)+len(rc.Groups)+len(rc.HD) == 0 {
				bad.add("admin.oidc.roles."+role, ": name the emails, groups or hd that have the role")
			}
		}
		if len(o.Roles) == 0 {
			bad.add("admin.oidc.roles", ": map at least one role to claims, or no one who signs in can do anything")
		}
		if o.GroupsClaim == "" {
			o.GroupsClaim = "groups"
		}
		if len(o.Scopes) == 0 {
			o.Scopes = []string{"email", "profile"}
		}
		if slices.Contains(o.Scopes, "openid") {
			o.Scopes = slices.DeleteFunc(o.Scopes, func(s string) bool { return s == "openid" })
		}
	}
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}
