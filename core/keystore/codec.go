package keystore

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// The stores keep a key and an audit entry as one JSON document each (a file's list, a
// DynamoDB item's doc attribute, a Firestore document's doc field), so every store holds
// every field the same way and a field added to Key needs no store's change.

// keyJSON writes the secret's hash as hex rather than 32 numbers (the shallower Hash field
// shadows config.Key's).
type keyJSON struct {
	*Key
	Hash string
}

// EncodeKey returns k as the stores keep it. A config key's Value or SHA256 (the secret, or
// its hash as typed) is never kept: a stored key has its Hash alone.
func EncodeKey(k *Key) ([]byte, error) {
	c := *k
	c.Value, c.SHA256 = "", ""
	return json.Marshal(keyJSON{Key: &c, Hash: hex.EncodeToString(k.Hash[:])})
}

// DecodeKey reads a key EncodeKey wrote.
func DecodeKey(b []byte) (*Key, error) {
	k := &Key{}
	j := keyJSON{Key: k}
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("keystore: a stored key does not read: %w", err)
	}
	h, err := hex.DecodeString(j.Hash)
	if err != nil || len(h) != len(k.Hash) {
		return nil, errors.New("keystore: a stored key's hash is not 64 hexadecimal characters")
	}
	copy(k.Hash[:], h)
	if k.ID == "" {
		return nil, errors.New("keystore: a stored key has no id")
	}
	return k, nil
}

// EncodeEntry returns e as the stores keep it.
func EncodeEntry(e *Entry) ([]byte, error) { return json.Marshal(e) }

// DecodeEntry reads an entry EncodeEntry wrote; an absent before or after stays nil.
func DecodeEntry(b []byte) (*Entry, error) {
	e := &Entry{}
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("keystore: a stored audit entry does not read: %w", err)
	}
	for _, m := range []*json.RawMessage{&e.Before, &e.After} {
		if bytes.Equal(*m, []byte("null")) {
			*m = nil
		}
	}
	return e, nil
}
