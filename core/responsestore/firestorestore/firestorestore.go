// Package firestorestore keeps stored responses in a Firestore collection (native mode), for
// the Cloud Functions gateway.
//
// One document per response, its id the owner and the response id (record.Key: each
// query-escaped, so no '/' splits the path and another key's response is another
// document), with the fields
//
//	owner, id   as given, checked again on every read
//	model       the gateway model
//	created     timestamps (Firestore keeps microseconds)
//	expires     the field the collection's TTL policy deletes on; TTL deletes up to a day
//	            or more late, so reads and deletes compare it with the store's clock
//	body        the input and the response, compressed (record.Pack)
//
// A document holds at most 1 MiB, counted as Firestore counts it (the document name, each
// field's name and value, 32 bytes more). A response is compressed and refused with
// ErrTooLarge when its document would still be larger, before any call, for the reasons
// dynamostore gives: one document per response keeps every read and write atomic.
//
// Every call runs under its own timeout.
package firestorestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/record"
)

// Limits and defaults.
const (
	// MaxDocumentBytes is Firestore's limit on a document's size.
	MaxDocumentBytes = 1 << 20
	// maxFieldBytes is Firestore's limit on one field's value (1 MiB - 89 bytes).
	maxFieldBytes = 1<<20 - 89
	// maxIDBytes is Firestore's limit on a document id.
	maxIDBytes = 1500
	// DefaultTimeout bounds a call when Options.Timeout is 0.
	DefaultTimeout = 2 * time.Second
	// TTLField is the field the collection's TTL policy names; the IaC declares the same.
	TTLField = "expires"
)

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is a responsestore.Store on one Firestore collection.
type Store struct {
	col     *firestore.CollectionRef
	c       *firestore.Client
	timeout time.Duration
	now     func() time.Time
}

// New returns a store on the named collection of the client's database.
func New(c *firestore.Client, collection string, opt Options) *Store {
	s := &Store{c: c, col: c.Collection(collection), timeout: opt.Timeout, now: opt.Now}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// document is a stored response's fields.
type document struct {
	Owner   string    `firestore:"owner"`
	ID      string    `firestore:"id"`
	Model   string    `firestore:"model,omitempty"`
	Created time.Time `firestore:"created"`
	Expires time.Time `firestore:"expires"`
	Body    []byte    `firestore:"body"`
}

// size is the document's size as Firestore counts it: the name (each path segment's bytes
// plus one, plus 16), each field's name (bytes plus one) and value (a string's bytes plus
// one, the bytes of a byte string, 8 for a timestamp), and 32.
func (d *document) size(collection, docID string) int {
	n := len(collection) + 1 + len(docID) + 1 + 16 + 32
	field := func(name string, value int) { n += len(name) + 1 + value }
	field("owner", len(d.Owner)+1)
	field("id", len(d.ID)+1)
	if d.Model != "" {
		field("model", len(d.Model)+1)
	}
	field("created", 8)
	field("expires", 8)
	field("body", len(d.Body))
	return n
}

func (s *Store) ref(id, owner string) (*firestore.DocumentRef, bool) {
	key := record.Key(owner, id)
	if len(key) > maxIDBytes {
		return nil, false
	}
	return s.col.Doc(key), true
}

func (s *Store) Put(ctx context.Context, st *responsestore.Stored) error {
	d, ref, err := s.document(st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := ref.Set(ctx, d); err != nil {
		return s.failed("put", st.ID, ctx, err)
	}
	return nil
}

// document builds st's document, or says why it cannot be stored.
func (s *Store) document(st *responsestore.Stored) (*document, *firestore.DocumentRef, error) {
	if st.Expires.IsZero() {
		return nil, nil, fmt.Errorf("firestorestore: put %s: no expiry", st.ID)
	}
	ref, ok := s.ref(st.ID, st.Owner)
	if !ok {
		return nil, nil, fmt.Errorf("firestorestore: put %s: id and owner make a document id longer than Firestore's %d bytes", st.ID, maxIDBytes)
	}
	body, err := record.Pack(st.Input, st.Response)
	if err != nil {
		return nil, nil, fmt.Errorf("firestorestore: put %s: %w", st.ID, err)
	}
	d := &document{Owner: st.Owner, ID: st.ID, Model: st.Model, Created: st.Created, Expires: st.Expires, Body: body}
	if n := d.size(s.col.ID, ref.ID); n > MaxDocumentBytes || len(body) > maxFieldBytes {
		return nil, nil, fmt.Errorf("%w: %s is a Firestore document of %d bytes compressed, over the limit of %d", responsestore.ErrTooLarge, st.ID, n, MaxDocumentBytes)
	}
	return d, ref, nil
}

func (s *Store) Get(ctx context.Context, id, owner string) (*responsestore.Stored, error) {
	ref, ok := s.ref(id, owner)
	if !ok {
		return nil, responsestore.ErrNotFound // Put refuses such ids: none is stored
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := ref.Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil, responsestore.ErrNotFound
	}
	if err != nil {
		return nil, s.failed("get", id, ctx, err)
	}
	d, err := s.live(snap, id, owner)
	if err != nil {
		return nil, err
	}
	st := &responsestore.Stored{ID: d.ID, Owner: d.Owner, Model: d.Model, Created: d.Created, Expires: d.Expires}
	if st.Input, st.Response, err = record.Unpack(d.Body); err != nil {
		return nil, fmt.Errorf("firestorestore: get %s: %w", id, err)
	}
	return st, nil
}

// live decodes a snapshot of the response id stored by owner, or ErrNotFound when it is
// another's (never, by its document id) or has expired.
func (s *Store) live(snap *firestore.DocumentSnapshot, id, owner string) (*document, error) {
	var d document
	if err := snap.DataTo(&d); err != nil {
		return nil, fmt.Errorf("firestorestore: %s: %w", snap.Ref.ID, err)
	}
	if d.ID != id || d.Owner != owner || !s.now().Before(d.Expires) {
		return nil, responsestore.ErrNotFound
	}
	return &d, nil
}

func (s *Store) Delete(ctx context.Context, id, owner string) error {
	ref, ok := s.ref(id, owner)
	if !ok {
		return responsestore.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// A transaction: of concurrent deletes one succeeds, and an expired response still
	// present (TTL is late) is not there for the caller.
	err := s.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(ref)
		if status.Code(err) == codes.NotFound {
			return responsestore.ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := s.live(snap, id, owner); err != nil {
			return err
		}
		return tx.Delete(ref)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, responsestore.ErrNotFound):
		return responsestore.ErrNotFound
	}
	return s.failed("delete", id, ctx, err)
}

// failed says which call failed, and that it timed out when it did.
func (s *Store) failed(op, id string, ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("firestorestore: %s %s: collection %s did not answer within %v: %w", op, id, s.col.ID, s.timeout, err)
	}
	return fmt.Errorf("firestorestore: %s %s in collection %s: %w", op, id, s.col.ID, err)
}

var _ responsestore.Store = (*Store)(nil)
