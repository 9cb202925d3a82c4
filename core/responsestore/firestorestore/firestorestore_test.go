package firestorestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/storetest"
	"github.com/fngate/fngate/internal/emulator"
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
	return fmt.Sprintf("responses_%d_%d", time.Now().UnixNano(), collections.Add(1))
}

// TestStoreAgainstEmulator runs the Store contract on the gcloud Firestore emulator, one
// collection per subtest.
func TestStoreAgainstEmulator(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsestore.Store {
		return New(c, collection(), Options{Now: now, Timeout: 20 * time.Second})
	}, storetest.Options{Limit: MaxDocumentBytes - 512})
}

// The limit is exact: a document of MaxDocumentBytes as the store counts it is written (so
// the count is never below Firestore's), one byte more is refused before any call.
func TestDocumentAtTheLimit(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	s := New(c, collection(), Options{Timeout: 20 * time.Second})
	ctx := context.Background()
	now := time.Now()
	st := &responsestore.Stored{ID: "resp_edge", Owner: "app", Created: now, Expires: now.Add(time.Hour),
		Model: "m", Response: []byte(`{"id":"resp_edge"}`)}
	d, ref, err := s.document(st)
	if err != nil {
		t.Fatal(err)
	}
	st.Model += strings.Repeat("m", MaxDocumentBytes-d.size(s.col.ID, ref.ID))
	if d, ref, err = s.document(st); err != nil || d.size(s.col.ID, ref.ID) != MaxDocumentBytes {
		t.Fatalf("padded document: %v; want exactly %d bytes", err, MaxDocumentBytes)
	}
	if err := s.Put(ctx, st); err != nil {
		t.Fatalf("a document of exactly MaxDocumentBytes was refused: %v", err)
	}
	if got, err := s.Get(ctx, st.ID, st.Owner); err != nil || got.Model != st.Model {
		t.Fatalf("Get: %v", err)
	}
	st.Model += "m"
	if err := s.Put(ctx, st); !errors.Is(err, responsestore.ErrTooLarge) {
		t.Fatalf("a document one byte over: err = %v, want ErrTooLarge", err)
	}
	// The emulator agrees that it is over: written directly, it is refused.
	d.Model = st.Model
	if _, err := ref.Set(ctx, d); err == nil {
		t.Logf("the emulator took a document of %d bytes; Firestore's limit is %d", MaxDocumentBytes+1, MaxDocumentBytes)
	}
}

// A database that does not answer fails each call after the store's timeout, as a failure,
// never as "not found"; a refused connection fails as quickly.
func TestUnreachableDatabase(t *testing.T) {
	for name, host := range map[string]string{
		"silent":  storetest.Blackhole(t),
		"refused": "127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			c := emulatorClient(t, host)
			storetest.Unreachable(t, New(c, "responses", Options{Timeout: 300 * time.Millisecond}))
		})
	}
}
