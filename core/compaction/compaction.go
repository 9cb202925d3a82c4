// Package compaction seals the summaries the gateway writes for POST /v1/responses/compact
// into the encrypted_content of a compaction item, and opens them when a client gives the
// item back. Sealing is AES-256-GCM (Go's standard library) under keys from the config
// (responses.compaction_keys), which every instance of a deployment shares, so an item
// sealed by one instance opens on any other.
//
// A sealed item reads
//
//	fngate:v1:compaction:<key id>:<base64url of nonce, ciphertext and tag>
//
// The key id names the key that sealed it, so keys can be rotated: the first configured key
// seals, every configured key opens. The prefix tells the gateway's items from OpenAI's,
// which only OpenAI can read. The additional data binds the item to its key id and to its
// owner, the gateway key that compacted the conversation: an item copied to another
// gateway key does not open there, so a key cannot have the gateway decrypt another key's
// conversation for it (the same boundary stored responses keep).
package compaction

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every item the gateway seals.
const Prefix = "fngate:v1:compaction:"

// KeySize is the length of a key: AES-256.
const KeySize = 32

// MaxSealed bounds an encrypted_content the gateway will try to open: OpenAI's own limit
// for the field (10 MiB).
const MaxSealed = 10 << 20

// maxKeyID bounds a key id, which every sealed item repeats.
const maxKeyID = 64

// Key is one configured key.
type Key struct {
	ID     string
	Secret []byte // KeySize bytes
}

// Keyring seals with its first key and opens with any. Safe for concurrent use.
type Keyring struct {
	sealID string
	seal   cipher.AEAD
	open   map[string]cipher.AEAD
}

// ErrInvalid is an item that does not open: altered, sealed for another owner, or sealed by
// another gateway under a key of the same id.
var ErrInvalid = errors.New("it could not be verified: it was altered, sealed for another API key, or sealed by another gateway")

// ErrMalformed is an item with the gateway's prefix that is not written as the gateway writes
// them.
var ErrMalformed = errors.New("it is not a compaction item this gateway wrote: the text after the fngate prefix is malformed")

// UnknownKeyError is an item sealed under a key id the keyring lacks.
type UnknownKeyError struct{ ID string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("it was sealed with the compaction key %q, which this gateway does not have (another gateway sealed it, or the key was retired)", e.ID)
}

// New builds a keyring; keys[0] seals. Ids must be unique, non-empty, at most 64 letters,
// digits, '.', '_' and '-', and secrets KeySize bytes.
func New(keys []Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("compaction: no keys")
	}
	k := &Keyring{open: make(map[string]cipher.AEAD, len(keys))}
	for i, key := range keys {
		if err := CheckID(key.ID); err != nil {
			return nil, fmt.Errorf("compaction: key %d: %w", i, err)
		}
		if len(key.Secret) != KeySize {
			return nil, fmt.Errorf("compaction: key %s: %d bytes, want %d", key.ID, len(key.Secret), KeySize)
		}
		if _, dup := k.open[key.ID]; dup {
			return nil, fmt.Errorf("compaction: key id %s is used twice", key.ID)
		}
		block, err := aes.NewCipher(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("compaction: key %s: %w", key.ID, err)
		}
		// A fresh random 96-bit nonce per item: sealing is rare (one per compaction), far
		// from the 2^32 items per key where random nonces start to risk a repeat.
		aead, err := cipher.NewGCMWithRandomNonce(block)
		if err != nil {
			return nil, fmt.Errorf("compaction: key %s: %w", key.ID, err)
		}
		k.open[key.ID] = aead
		if i == 0 {
			k.sealID, k.seal = key.ID, aead
		}
	}
	return k, nil
}

// CheckID reports what is wrong with a key id, or nil.
func CheckID(id string) error {
	if id == "" {
		return errors.New("the key id is empty")
	}
	if len(id) > maxKeyID {
		return fmt.Errorf("the key id is longer than %d characters", maxKeyID)
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return errors.New("a key id is letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

// SealID is the id of the key that seals.
func (k *Keyring) SealID() string { return k.sealID }

// Sealed reports whether s is written as the gateway seals (it may still fail to open).
func Sealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Seal seals summary for owner under the first key.
func (k *Keyring) Seal(owner string, summary []byte) string {
	ct := k.seal.Seal(nil, nil, summary, additional(k.sealID, owner))
	b := make([]byte, 0, len(Prefix)+len(k.sealID)+1+base64.RawURLEncoding.EncodedLen(len(ct)))
	b = append(b, Prefix...)
	b = append(b, k.sealID...)
	b = append(b, ':')
	b = base64.RawURLEncoding.AppendEncode(b, ct)
	return string(b)
}

// Open returns the summary sealed in s for owner. Its errors say why it does not open, in
// words a client reads after the field's name.
func (k *Keyring) Open(owner, s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok || len(s) > MaxSealed {
		return nil, ErrMalformed
	}
	id, body, ok := strings.Cut(rest, ":")
	if !ok || CheckID(id) != nil {
		return nil, ErrMalformed
	}
	aead, ok := k.open[id]
	if !ok {
		return nil, &UnknownKeyError{ID: id}
	}
	ct, err := strictBase64.DecodeString(body)
	if err != nil || len(ct) < aead.Overhead() {
		return nil, ErrMalformed
	}
	out, err := aead.Open(nil, nil, ct, additional(id, owner))
	if err != nil {
		return nil, ErrInvalid
	}
	return out, nil
}

// strictBase64 refuses unused bits set in the last character, so that every character of a
// sealed item counts: one changed anywhere never opens.
var strictBase64 = base64.RawURLEncoding.Strict()

// additional is the data each item is bound to besides its text: the format, the key id and
// the owner, each length-prefixed so that no two pairs read alike.
func additional(id, owner string) []byte {
	b := make([]byte, 0, 32+len(id)+len(owner))
	b = append(b, Prefix...)
	b = appendField(b, id)
	return appendField(b, owner)
}

func appendField(b []byte, s string) []byte {
	n := len(s)
	b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, s...)
}
