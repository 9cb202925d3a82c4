package config

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/telemetry"
)

// testKey is 32 bytes whose base64 spellings all differ (a '+' and a '/' in the standard one).
var testKey = []byte("\xfb\xef\xbe0123456789abcdefghijklmnopqr\xff")

// TestCompactionKeysDecode: each base64 spelling of a 32-byte key loads, from the
// environment or a secret reference, in order (the first seals).
func TestCompactionKeysDecode(t *testing.T) {
	spellings := map[string]string{
		"std": base64.StdEncoding.EncodeToString(testKey), "raw std": base64.RawStdEncoding.EncodeToString(testKey),
		"url": base64.URLEncoding.EncodeToString(testKey), "raw url": base64.RawURLEncoding.EncodeToString(testKey),
	}
	for name, k := range spellings {
		yaml := "responses:\n  compaction_keys:\n    - {id: k2026, key: \"${COMPACTION_KEY}\"}\n    - {id: k2025, key: \"aws-sm://fngate/compaction#old\"}\n" + base
		cfg, err := Parse(context.Background(), []byte(yaml), Options{
			Getenv:  env(map[string]string{"COMPACTION_KEY": k}),
			Secrets: map[string]SecretResolver{SchemeAWS: fixedResolver(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))},
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys := cfg.Responses.CompactionKeys
		if len(keys) != 2 || keys[0].ID != "k2026" || !bytes.Equal(keys[0].Secret, testKey) || !bytes.Equal(keys[1].Secret, bytes.Repeat([]byte{7}, 32)) {
			t.Fatalf("%s: keys %+v", name, keys)
		}
		ring, err := cfg.CompactionKeyring()
		if err != nil || ring.SealID() != "k2026" {
			t.Fatalf("%s: keyring %v, %v", name, ring, err)
		}
		// Every spelling of the key, and of the secret the reference resolved to, is blanked
		// out of log lines.
		redact := telemetry.NewSecrets(cfg.Secrets).Redact
		for other, s := range spellings {
			if got := redact("key " + s + " end"); strings.Contains(got, s) {
				t.Errorf("%s: the %s spelling is not redacted: %q", name, other, got)
			}
		}
		if got := redact(fmt.Sprintf("%x", testKey)); strings.Contains(got, fmt.Sprintf("%x", testKey)) {
			t.Errorf("%s: the hex of the key is not redacted", name)
		}
	}
}

// TestNoCompactionKeysNoKeyring: none configured, there is no keyring (compaction is left to
// OpenAI's routes), and no error.
func TestNoCompactionKeysNoKeyring(t *testing.T) {
	cfg, err := Parse(context.Background(), []byte(base), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ring, err := cfg.CompactionKeyring(); ring != nil || err != nil {
		t.Fatalf("keyring %v, %v", ring, err)
	}
}

// Each mistake is refused at load with the key path and the line marked "# <-", and the
// refusal never quotes the key.
func TestCompactionKeyMistakes(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	good := base64.StdEncoding.EncodeToString(testKey)
	for _, tc := range []struct {
		name, yaml, path, why string
	}{
		{"an unset variable with an empty default", "responses:\n  compaction_keys:\n    - {id: k1, key: \"${FNGATE_COMPACTION_KEY:-}\"} # <-\n", "responses.compaction_keys[0].key", "is required"},
		{"no key", "responses:\n  compaction_keys:\n    - {id: k1} # <-\n", "responses.compaction_keys[0].key", "is required"},
		{"a short key", "responses:\n  compaction_keys:\n    - {id: k1, key: " + short + "} # <-\n", "responses.compaction_keys[0].key", "decodes to 16 bytes"},
		{"not base64", "responses:\n  compaction_keys:\n    - {id: k1, key: \"not base64 at all!\"} # <-\n", "responses.compaction_keys[0].key", "is not base64"},
		{"no id", "responses:\n  compaction_keys:\n    - {key: " + good + "} # <-\n", "responses.compaction_keys[0].id", "the key id is empty"},
		{"a bad id", "responses:\n  compaction_keys:\n    - {id: \"k 1\", key: " + good + "} # <-\n", "responses.compaction_keys[0].id", "letters, digits"},
		{"a repeated id", "responses:\n  compaction_keys:\n    - {id: k1, key: " + good + "}\n    - {id: k1, key: " + good + "} # <-\n", "responses.compaction_keys[1].id", "is the id of responses.compaction_keys[0] too"},
		{"a misspelt setting", "responses:\n  compaction_keys:\n    - id: k1\n      key: " + good + "\n      secret: x # <-\n", "responses.compaction_keys[0].secret", "is not a setting of a compaction key"},
		{"a misspelt section", "responses:\n  compaction_key: [] # <-\n", "responses.compaction_key", "is not a setting of responses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := 0
			for i, l := range strings.Split(tc.yaml, "\n") {
				if strings.Contains(l, "# <-") {
					line = i + 1
				}
			}
			_, err := Parse(context.Background(), []byte(tc.yaml+base), Options{Getenv: env(nil)})
			if err == nil {
				t.Fatal("accepted")
			}
			where := fmt.Sprintf("line %d: %s", line, tc.path)
			if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q\nwant it to name %q and say %q", err, where, tc.why)
			}
			for _, secret := range []string{short, good, "not base64 at all"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error quotes the key: %q", err)
				}
			}
		})
	}
}

type fixedResolver string

func (f fixedResolver) Resolve(_ context.Context, ref string) (string, error) {
	if !strings.HasPrefix(ref, "aws-sm://") {
		return "", errors.New("not a reference")
	}
	return string(f), nil
}
