package firestorestore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/mcpsessions/internal/storetest"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/loopback"
)

func emulatorClient(t *testing.T, host string) *firestore.Client {
	t.Helper()
	t.Setenv("FIRESTORE_EMULATOR_HOST", host)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var collections atomic.Int64

func collection() string {
	return fmt.Sprintf("mcp_sessions_%d_%d", time.Now().UnixNano(), collections.Add(1))
}

// The emulator is slow under load: a call may take seconds.
const emulatorTimeout = 15 * time.Second

// TestStoreAgainstEmulator runs the Store contract on the gcloud Firestore emulator, one
// collection per subtest, and checks the document is what the IaC and the package doc say:
// its id the session id, its TTL field a timestamp. (One emulator: each takes seconds to
// start.)
func TestStoreAgainstEmulator(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) mcpsessions.Store {
		return New(c, collection(), Options{Now: now, Timeout: emulatorTimeout})
	})

	t.Run("document layout", func(t *testing.T) {
		exp := time.Date(2026, 11, 29, 13, 0, 0, 123456000, time.UTC)
		s := New(c, collection(), Options{Now: func() time.Time { return exp.Add(-time.Hour) }, Timeout: emulatorTimeout})
		ctx := context.Background()
		const id = "q1w2E3r4-_Z9"
		if err := s.Put(ctx, mcpsessions.Session{ID: id, Owner: "key_app", State: []byte(`{}`), Expires: exp}); err != nil {
			t.Fatal(err)
		}
		snap, err := s.col.Doc(id).Get(ctx)
		if err != nil {
			t.Fatalf("the document is not under the session id: %v", err)
		}
		if v, err := snap.DataAt(TTLField); err != nil || !v.(time.Time).Equal(exp) {
			t.Errorf("%s = %v, %v; want the timestamp %v", TTLField, v, err, exp)
		}
	})
}

func TestDocID(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"abc", "a/b", "a%2Fb", ".", "..", "%2E", "...", "_x", "__x__", "%5Fx", "x_", "a b"} {
		k := docID(id)
		if other, dup := seen[k]; dup {
			t.Errorf("ids %q and %q share the document %q", id, other, k)
		}
		seen[k] = id
		if k == "." || k == ".." || len(k) > 1 && k[0] == '_' && k[1] == '_' {
			t.Errorf("docID(%q) = %q, which Firestore refuses", id, k)
		}
		for _, r := range k {
			if r == '/' {
				t.Errorf("docID(%q) = %q holds a '/'", id, k)
			}
		}
	}
	if k := docID("Zm9vYmFy-_0123456789abcdef"); k != "Zm9vYmFy-_0123456789abcdef" {
		t.Errorf("a base64url id was escaped to %q", k)
	}
}

// A database that does not answer fails each call after the store's timeout, as a failure,
// never as "not found"; a refused connection fails as quickly.
func TestUnreachableDatabase(t *testing.T) {
	for name, host := range map[string]string{
		"silent":  loopback.Blackhole(t),
		"refused": "127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			c := emulatorClient(t, host)
			storetest.Unreachable(t, New(c, "mcp_sessions", Options{Timeout: 300 * time.Millisecond}), 10*time.Second)
		})
	}
}
