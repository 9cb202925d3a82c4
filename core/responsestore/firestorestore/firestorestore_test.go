package firestorestore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/storetest"
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
	return fmt.Sprintf("responses_%d_%d", time.Now().UnixNano(), collections.Add(1))
}

// TestStoreAgainstEmulator runs the Store contract on the gcloud Firestore emulator, one
// collection per subtest.
func TestStoreAgainstEmulator(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsestore.Store {
		return New(c, collection(), Options{Now: now, Timeout: 20 * time.Second, MaxBody: testMaxBody})
	}, storetest.Options{Limit: testMaxBody})
}

// The head's limit is exact: a document of MaxDocumentBytes as the store counts it is
// written whole (so the count is never below Firestore's, and the emulator refuses one byte
// more); beyond it the body goes into parts, which read back whole and are deleted with
// their head.
func TestDocumentAtTheLimitAndParts(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	s := New(c, collection(), Options{Timeout: 20 * time.Second})
	ctx := context.Background()
	now := time.Now()
	st := &responsestore.Stored{ID: "resp_edge", Owner: "app", Created: now, Expires: now.Add(time.Hour),
		Model: "m", Response: []byte(`{"id":"resp_edge"}`)}
	d, _, ref, err := s.document(st)
	if err != nil {
		t.Fatal(err)
	}
	st.Model += strings.Repeat("m", MaxDocumentBytes-d.size(s.col.ID, ref.ID))
	d, parts, ref, err := s.document(st)
	if err != nil || len(parts) != 0 || d.size(s.col.ID, ref.ID) != MaxDocumentBytes {
		t.Fatalf("padded document: %d parts, %v; want one document of exactly %d bytes", len(parts), err, MaxDocumentBytes)
	}
	if err := s.Put(ctx, st); err != nil {
		t.Fatalf("a document of exactly MaxDocumentBytes was refused: %v", err)
	}
	if got, err := s.Get(ctx, st.ID, st.Owner); err != nil || got.Model != st.Model {
		t.Fatalf("Get: %v", err)
	}
	// The emulator counts as the store does: one byte more is refused.
	d.Model += "m"
	if _, err := ref.Set(ctx, d); err == nil {
		t.Errorf("the emulator took a document of %d bytes; the store's count is off", MaxDocumentBytes+1)
	}

	// Over a document: the body moves to parts.
	st.Model = "m"
	st.Input = make([]byte, MaxDocumentBytes)
	_, _ = rand.Read(st.Input)
	if _, parts, _, err := s.document(st); err != nil || len(parts) != 2 {
		t.Fatalf("a response of 1 MiB random bytes: %d parts, %v; want 2", len(parts), err)
	}
	if err := s.Put(ctx, st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, st.ID, st.Owner)
	if err != nil || string(got.Input) != string(st.Input) {
		t.Fatalf("Get of a response in parts: %v", err)
	}
	if n := count(t, s); n != 3 {
		t.Errorf("the collection holds %d documents, want the head and two parts", n)
	}
	if err := s.Delete(ctx, st.ID, st.Owner); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s); n != 0 {
		t.Errorf("after Delete the collection holds %d documents, want none: the parts go with the head", n)
	}
}

func count(t *testing.T, s *Store) int {
	t.Helper()
	docs, err := s.col.Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	return len(docs)
}

// Beyond MaxBodyBytes a response is refused before any call (the client here reaches nothing).
func TestTooLargeIsRefusedBeforeAnyCall(t *testing.T) {
	c := emulatorClient(t, "127.0.0.1:1")
	now := time.Now()
	st := &responsestore.Stored{ID: "resp_huge", Owner: "app", Created: now, Expires: now.Add(time.Hour), Response: make([]byte, MaxBodyBytes+1)}
	_, _ = rand.Read(st.Response)
	if err := New(c, "responses", Options{Timeout: time.Minute}).Put(context.Background(), st); !errors.Is(err, responsestore.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
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
			storetest.Unreachable(t, New(c, "responses", Options{Timeout: 300 * time.Millisecond}))
		})
	}
}

// testMaxBody is the conformance suite's limit: above one document, so parts are exercised,
// and far below MaxBodyBytes, whose nine megabytes through the emulator under the race
// detector take minutes. The real limit is checked without the emulator below.
const testMaxBody = 2 << 20
