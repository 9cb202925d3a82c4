package keystore

import (
	"crypto/rand"
	"crypto/sha256"
	"math/big"
)

// SecretPrefix begins every secret the gateway makes, so a leaked one is recognisable (secret
// scanners match it) and never mistaken for a provider's key.
const SecretPrefix = "sk-fngate-"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSecret returns a new key secret: SecretPrefix and 32 random bytes in base62 (43
// characters), with its SHA-256, which is all a store keeps.
func NewSecret() (secret string, hash [32]byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("keystore: the system's random source failed: " + err.Error()) // crypto/rand does not fail on supported platforms
	}
	secret = SecretPrefix + encode62(b[:], 43)
	return secret, sha256.Sum256([]byte(secret))
}

// NewID returns a new key id: IDPrefix and 24 base62 characters (about 143 random bits).
func NewID() string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("keystore: the system's random source failed: " + err.Error())
	}
	return IDPrefix + encode62(b[:], 24)
}

// NewEntryID returns a new audit entry id: aud_ and 24 base62 characters.
func NewEntryID() string { return "aud_" + NewID()[len(IDPrefix):] }

// encode62 writes b as a base62 number of exactly n digits (n is enough digits for len(b)
// bytes: 62^n > 256^len(b)).
func encode62(b []byte, n int) string {
	v := new(big.Int).SetBytes(b)
	base := big.NewInt(62)
	out := make([]byte, n)
	var mod big.Int
	for i := n - 1; i >= 0; i-- {
		v.DivMod(v, base, &mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}
