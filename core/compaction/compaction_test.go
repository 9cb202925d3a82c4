package compaction

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func key(id string, fill byte) Key { return Key{ID: id, Secret: bytes.Repeat([]byte{fill}, KeySize)} }

func ring(t *testing.T, keys ...Key) *Keyring {
	t.Helper()
	k, err := New(keys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSealOpensForItsOwnerOnly: an item opens for the owner it was sealed for, and for no
// other (another API key's conversation stays unreadable through this key).
func TestSealOpensForItsOwnerOnly(t *testing.T) {
	k := ring(t, key("k1", 1))
	s := k.Seal("app-a", []byte("the summary"))
	if !strings.HasPrefix(s, Prefix+"k1:") || strings.Contains(s, "summary") {
		t.Fatalf("sealed %q", s)
	}
	got, err := k.Open("app-a", s)
	if err != nil || string(got) != "the summary" {
		t.Fatalf("open = %q, %v", got, err)
	}
	for _, other := range []string{"app-b", "", "app-a ", "APP-A"} {
		if _, err := k.Open(other, s); !errors.Is(err, ErrInvalid) {
			t.Errorf("owner %q: err %v, want ErrInvalid", other, err)
		}
	}
	if k.Seal("app-a", []byte("the summary")) == s {
		t.Error("two seals of one text are equal: the nonce is not fresh")
	}
}

// TestEveryTamperedCharacterIsRefused changes each character of a sealed item in turn: in
// the prefix, the key id, the nonce, the ciphertext and the tag. None opens.
func TestEveryTamperedCharacterIsRefused(t *testing.T) {
	k := ring(t, key("k1", 1), key("k2", 2))
	s := k.Seal("owner", []byte("a summary long enough to span several blocks of AES"))
	for i := range len(s) {
		b := []byte(s)
		for _, c := range []byte{'A', 'B', '_', '-', 'z'} {
			if s[i] == c {
				continue
			}
			b[i] = c
			if got, err := k.Open("owner", string(b)); err == nil {
				t.Fatalf("character %d changed to %q: opened as %q", i, c, got)
			}
		}
	}
	if _, err := k.Open("owner", s[:len(s)-1]); err == nil {
		t.Error("a truncated item opened")
	}
	if _, err := k.Open("owner", s+"A"); err == nil {
		t.Error("an item with a character added opened")
	}
}

// TestRotatedKeys: the first key seals; an item sealed by an older key still opens while that
// key is configured, and stops opening (naming the key id) once it is retired.
func TestRotatedKeys(t *testing.T) {
	old := ring(t, key("k2025", 1))
	s := old.Seal("o", []byte("before rotation"))
	rotated := ring(t, key("k2026", 2), key("k2025", 1))
	if got, err := rotated.Open("o", s); err != nil || string(got) != "before rotation" {
		t.Fatalf("an item of the older key: %q, %v", got, err)
	}
	if n := rotated.Seal("o", nil); !strings.HasPrefix(n, Prefix+"k2026:") || rotated.SealID() != "k2026" {
		t.Errorf("the first key must seal: %q", n)
	}
	retired := ring(t, key("k2026", 2))
	var uk *UnknownKeyError
	if _, err := retired.Open("o", s); !errors.As(err, &uk) || uk.ID != "k2025" || !strings.Contains(err.Error(), `"k2025"`) {
		t.Fatalf("retired key: %v", err)
	}
}

// TestSameKeyIDAnotherSecret: another gateway's key of the same id does not open the item.
func TestSameKeyIDAnotherSecret(t *testing.T) {
	s := ring(t, key("k1", 1)).Seal("o", []byte("x"))
	if _, err := ring(t, key("k1", 9)).Open("o", s); !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v, want ErrInvalid", err)
	}
}

func TestMalformedItems(t *testing.T) {
	k := ring(t, key("k1", 1))
	for _, s := range []string{
		"", "gAAAAABopenai", Prefix, Prefix + "k1", Prefix + "k1:", Prefix + "k1:!!!!", Prefix + ":abcd",
		Prefix + "bad id:abcd", Prefix + "k1:AAAA", Prefix + "k1:" + strings.Repeat("A", MaxSealed),
	} {
		if _, err := k.Open("o", s); !errors.Is(err, ErrMalformed) {
			t.Errorf("%.40q: err %v, want ErrMalformed", s, err)
		}
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for name, keys := range map[string][]Key{
		"none":        nil,
		"short":       {{ID: "k", Secret: make([]byte, 16)}},
		"empty id":    {key("", 1)},
		"bad id":      {key("k/1", 1)},
		"long id":     {key(strings.Repeat("k", 65), 1)},
		"repeated id": {key("k", 1), key("k", 2)},
	} {
		if _, err := New(keys); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
