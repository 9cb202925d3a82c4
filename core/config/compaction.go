package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/fngate/fngate/core/compaction"
)

// CompactionKey is one key of responses.compaction_keys: the gateway seals the summaries of
// POST /v1/responses/compact with the first, and opens the compaction items clients give
// back with any, so a key is rotated by putting its successor first and dropping it once the
// items it sealed no longer matter. Every instance of a deployment must hold the same keys.
type CompactionKey struct {
	// ID names the key inside every item it seals (letters, digits, '.', '_', '-').
	ID string `yaml:"id"`
	// Key is the base64 of 32 random bytes (openssl rand -base64 32), standard or URL-safe,
	// padded or not; usually ${ENV} or a secret reference (aws-sm://, gcp-sm://).
	Key string `yaml:"key"`

	// Secret is Key decoded, set by validation.
	Secret []byte `yaml:"-"`
}

// validateCompactionKeys decodes responses.compaction_keys and records each key, in every
// spelling it may take, as a secret. A listed key that is empty (an unset
// ${FNGATE_COMPACTION_KEY:-}) stops the load rather than leaving compaction off unnoticed.
func (c *Config) validateCompactionKeys(bad *problems) {
	ids := map[string]int{}
	for i := range c.Responses.CompactionKeys {
		k := &c.Responses.CompactionKeys[i]
		p := fmt.Sprintf("responses.compaction_keys[%d]", i)
		for _, key := range bad.where.children(p) {
			if key != "id" && key != "key" {
				bad.add(p+"."+key, " is not a setting of a compaction key (settings: id, key)")
			}
		}
		if err := compaction.CheckID(k.ID); err != nil {
			bad.add(p+".id", ": %v", err)
		} else if first, dup := ids[k.ID]; dup {
			bad.add(p+".id", " %q is the id of responses.compaction_keys[%d] too: give each key its own id", k.ID, first)
		} else {
			ids[k.ID] = i
		}
		// The value is never quoted back: it is a secret.
		raw, ok := decodeKey(k.Key)
		switch {
		case strings.TrimSpace(k.Key) == "":
			bad.add(p+".key", " is required: the base64 of %d random bytes (openssl rand -base64 %d)", compaction.KeySize, compaction.KeySize)
		case !ok:
			bad.add(p+".key", " is not base64 text")
		case len(raw) != compaction.KeySize:
			bad.add(p+".key", " decodes to %d bytes; an AES-256 key is %d (openssl rand -base64 %d)", len(raw), compaction.KeySize, compaction.KeySize)
		default:
			k.Secret = raw
			c.addSecret(k.Key)
			c.addSecret(string(raw))
			c.addSecret(hex.EncodeToString(raw))
		}
	}
}

// decodeKey reads base64 in any of its four spellings.
func decodeKey(s string) ([]byte, bool) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// CompactionKeyring is the keyring of responses.compaction_keys, or nil when none is
// configured.
func (c *Config) CompactionKeyring() (*compaction.Keyring, error) {
	if len(c.Responses.CompactionKeys) == 0 {
		return nil, nil
	}
	keys := make([]compaction.Key, 0, len(c.Responses.CompactionKeys))
	for _, k := range c.Responses.CompactionKeys {
		keys = append(keys, compaction.Key{ID: k.ID, Secret: slices.Clone(k.Secret)})
	}
	return compaction.New(keys)
}
