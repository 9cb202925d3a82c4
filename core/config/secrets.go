package config

import (
	"context"
	"fmt"
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
		if isSecret && *v != "" {
			cfg.Secrets = append(cfg.Secrets, *v)
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
