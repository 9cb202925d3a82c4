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

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/internal/pack"
	"github.com/fngate/fngate/core/responsecache/internal/storetest"
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
	return fmt.Sprintf("cache_%d_%d", time.Now().UnixNano(), collections.Add(1))
}

// TestStoreAgainstEmulator runs the Store contract on the gcloud Firestore emulator, one
// collection per subtest. A document holds a little less than MaxDocumentBytes of body:
// its name, the times and the fields' names take the rest.
func TestStoreAgainstEmulator(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsecache.Store {
		return New(c, collection(), Options{Now: now, Timeout: 20 * time.Second})
	}, storetest.Options{Limit: MaxDocumentBytes - 400, Compresses: true})
}

// The document's limit is exact: a body that makes a document of MaxDocumentBytes as the
// store counts it is written as it is (so the count is never below Firestore's, and the
// emulator refuses one byte more); one byte more is compressed when that fits.
func TestDocumentAtTheLimit(t *testing.T) {
	c := emulatorClient(t, emulator.Firestore(t))
	s := New(c, collection(), Options{Timeout: 20 * time.Second})
	ctx := context.Background()
	now := time.Now()
	e := &responsecache.Entry{Key: storetest.Key(), Model: "m", Created: now, Expires: now.Add(time.Hour)}
	d, err := s.document(e)
	if err != nil {
		t.Fatal(err)
	}
	e.Body = storetest.Random(MaxDocumentBytes - d.size(s.col.ID, e.Key))
	if d, err = s.document(e); err != nil || d.GZ || d.size(s.col.ID, e.Key) != MaxDocumentBytes {
		t.Fatalf("padded document: %v; want one of exactly %d bytes, not compressed", err, MaxDocumentBytes)
	}
	if err := s.Put(ctx, e); err != nil {
		t.Fatalf("a document of exactly MaxDocumentBytes was refused: %v", err)
	}
	if got, err := s.Get(ctx, e.Key); err != nil || string(got.Body) != string(e.Body) {
		t.Fatalf("Get: %v", err)
	}
	// The emulator counts as the store does: one byte more is refused.
	d.Model += "m"
	if _, err := s.col.Doc(e.Key).Set(ctx, d); err == nil {
		t.Errorf("the emulator took a document of %d bytes; the store's count is off", MaxDocumentBytes+1)
	}

	// One byte more of what compresses: stored compressed, read back as it was.
	e.Body = []byte(strings.Repeat("a", len(e.Body)+1))
	if err := s.Put(ctx, e); err != nil {
		t.Fatal(err)
	}
	var stored document
	if snap, err := s.col.Doc(e.Key).Get(ctx); err != nil || snap.DataTo(&stored) != nil || !stored.GZ || len(stored.Body) >= len(e.Body) {
		t.Errorf("a body over the document's limit was not stored compressed: %v", err)
	}
	if got, err := s.Get(ctx, e.Key); err != nil || string(got.Body) != string(e.Body) {
		t.Fatalf("Get of a compressed body: %v", err)
	}
}

// What does not fit, and a key that is not one, are refused before any call (the client
// here reaches nothing).
func TestRefusedBeforeAnyCall(t *testing.T) {
	c := emulatorClient(t, "127.0.0.1:1")
	s := New(c, "cache", Options{Timeout: time.Minute})
	now := time.Now()
	for name, e := range map[string]*responsecache.Entry{
		"over the document": {Key: storetest.Key(), Created: now, Expires: now.Add(time.Hour), Body: storetest.Random(MaxDocumentBytes)},
		"over MaxBody":      {Key: storetest.Key(), Created: now, Expires: now.Add(time.Hour), Body: make([]byte, pack.MaxBody+1)},
		"bad key":           {Key: "../" + storetest.Key()[3:], Created: now, Expires: now.Add(time.Hour), Body: []byte("x")},
	} {
		began := time.Now()
		err := s.Put(context.Background(), e)
		if err == nil || name != "bad key" && !errors.Is(err, responsecache.ErrTooLarge) {
			t.Errorf("%s: err = %v", name, err)
		}
		if time.Since(began) > 10*time.Second {
			t.Errorf("%s: Put took %v: it tried the database", name, time.Since(began))
		}
	}
}

// A database that does not answer fails each call after the store's timeout, as a failure,
// never as a miss; a refused connection fails as quickly.
func TestUnreachableDatabase(t *testing.T) {
	for name, host := range map[string]string{
		"silent":  loopback.Blackhole(t),
		"refused": "127.0.0.1:1",
	} {
		t.Run(name, func(t *testing.T) {
			c := emulatorClient(t, host)
			storetest.Unreachable(t, New(c, "cache", Options{Timeout: 300 * time.Millisecond}), 5*time.Second)
		})
	}
}

// Open takes the collection and the timeout from the config, or the defaults.
func TestOpen(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	ctx := context.Background()
	var c config.ResponseCache
	c.Project, c.Collection, c.Timeout = "fngate-test", collection(), config.Duration(10*time.Second)
	s, closeClient, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient()
	if s.timeout != 10*time.Second || s.Where() != "collection "+c.Collection+" of database (default)" {
		t.Errorf("opened %s with timeout %v", s.Where(), s.timeout)
	}
	now := time.Now()
	e := &responsecache.Entry{Key: storetest.Key(), Created: now, Expires: now.Add(time.Hour), Body: []byte("answer")}
	if err := s.Put(ctx, e); err != nil {
		t.Fatal(err)
	}
	other := New(emulatorClient(t, emulator.Firestore(t)), c.Collection, Options{Timeout: 10 * time.Second})
	if got, err := other.Get(ctx, e.Key); err != nil || string(got.Body) != "answer" {
		t.Fatalf("the collection holds %+v, %v", got, err)
	}

	c = config.ResponseCache{}
	c.Project = "fngate-test"
	s, closeClient, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient()
	if s.timeout != config.DefaultCacheTimeout || s.col.ID != config.DefaultCacheCollection {
		t.Errorf("an unset config opened %s with timeout %v; want the cache's defaults", s.Where(), s.timeout)
	}
}
