// Package firestorestore keeps stored responses in a Firestore collection (native mode), for
// the Cloud Functions gateway (and a local server that names it).
//
// A response is one head document, and when its body does not fit in the head, parts. The
// head's id is the owner and the response id (record.Key: each query-escaped, so no '/'
// splits the path and another key's response is another document), with the fields
//
//	owner, id    as given, checked again on every read
//	model        the gateway model
//	created      timestamps (Firestore keeps microseconds)
//	expires      the field the collection's TTL policy deletes on; TTL deletes up to a day
//	             or more late, so reads and deletes compare it with the store's clock
//	body         the input and the response, compressed (record.Pack), when it fits
//	gen, parts   otherwise: the body is in parts documents record.PartKey(id, gen, i) of
//	             the same collection, each with body and expires (so TTL takes them too)
//
// A document holds at most 1 MiB, counted as Firestore counts it (the document name, each
// field's name and value, 32 bytes more). A larger body is cut into parts, written first
// (in parallel, each its own commit: the emulator takes at most 4 MiB in one request) and
// the head that names them last, so a reader, which finds parts only through a head, reads
// a whole response or none (see record.Generation); a response of up to MaxBodyBytes
// compressed is stored, a larger one refused with ErrTooLarge before any call. Parts whose
// head was never written (a failed Put) or was replaced are left to TTL: nothing reads
// them. A delete removes the head and its parts in one transaction.
//
// Each Put, Get and Delete runs under the store's timeout.
package firestorestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/firestoredoc"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/record"
)

// Limits and defaults.
const (
	// MaxDocumentBytes is Firestore's limit on a document's size.
	MaxDocumentBytes = firestoredoc.MaxBytes
	// maxFieldBytes is Firestore's limit on one field's value.
	maxFieldBytes = firestoredoc.MaxFieldBytes
	// partBytes is the body a part carries: a document's limit less its name and fields.
	partBytes = MaxDocumentBytes - 8<<10
	// MaxBodyBytes is the largest compressed body stored.
	MaxBodyBytes = record.MaxBody
	// concurrency bounds the parts one call writes at a time.
	concurrency = 4
	// maxIDBytes is Firestore's limit on a document id, less what a part id adds.
	maxIDBytes = 1500 - 64
	// TTLField is the field the collection's TTL policy names; the IaC declares the same.
	TTLField = "expires"
)

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means config.DefaultStoreTimeout, the responses.timeout
	// a config leaves unset.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
	// MaxBody is the largest compressed body Put keeps, at most MaxBodyBytes; 0 means
	// MaxBodyBytes. Tests lower it so that crossing the limit is a megabyte, not nine, of
	// data through an emulator under the race detector.
	MaxBody int
}

// Store is a responsestore.Store on one Firestore collection.
type Store struct {
	col     *firestore.CollectionRef
	c       *firestore.Client
	timeout time.Duration
	now     func() time.Time
	maxBody int
}

// New returns a store on the named collection of the client's database.
func New(c *firestore.Client, collection string, opt Options) *Store {
	s := &Store{c: c, col: c.Collection(collection), timeout: opt.Timeout, now: opt.Now}
	if s.timeout <= 0 {
		s.timeout = config.DefaultStoreTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody = opt.MaxBody; s.maxBody <= 0 || s.maxBody > MaxBodyBytes {
		s.maxBody = MaxBodyBytes
	}
	return s
}

// document is a stored response's head.
type document struct {
	Owner   string    `firestore:"owner"`
	ID      string    `firestore:"id"`
	Model   string    `firestore:"model,omitempty"`
	Created time.Time `firestore:"created"`
	Expires time.Time `firestore:"expires"`
	Body    []byte    `firestore:"body,omitempty"`
	Gen     string    `firestore:"gen,omitempty"`
	Parts   int       `firestore:"parts,omitempty"`
}

// part is one piece of a body too large for its head.
type part struct {
	Body    []byte    `firestore:"body"`
	Expires time.Time `firestore:"expires"`
}

func (d *document) size(collection, id string) int {
	f := map[string]int{"owner": firestoredoc.StringBytes(d.Owner), "id": firestoredoc.StringBytes(d.ID),
		"created": firestoredoc.TimestampBytes, "expires": firestoredoc.TimestampBytes}
	if d.Model != "" {
		f["model"] = firestoredoc.StringBytes(d.Model)
	}
	if d.Body != nil {
		f["body"] = len(d.Body)
	}
	if d.Gen != "" {
		f["gen"], f["parts"] = firestoredoc.StringBytes(d.Gen), firestoredoc.IntegerBytes
	}
	return firestoredoc.Size(collection, id, f)
}

func (s *Store) ref(id, owner string) (*firestore.DocumentRef, bool) {
	key := record.Key(owner, id)
	if len(key) > maxIDBytes {
		return nil, false
	}
	return s.col.Doc(key), true
}

func (s *Store) partRef(head *firestore.DocumentRef, gen string, i int) *firestore.DocumentRef {
	return s.col.Doc(record.PartKey(head.ID, gen, i))
}

func (s *Store) Put(ctx context.Context, st *responsestore.Stored) error {
	d, parts, ref, err := s.document(st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// The parts, then the head that names them.
	err = record.Each(len(parts), concurrency, func(i int) error {
		_, err := s.partRef(ref, d.Gen, i).Set(ctx, parts[i])
		return err
	})
	if err == nil {
		_, err = ref.Set(ctx, d)
	}
	if err != nil {
		return s.failed("put", st.ID, ctx, err)
	}
	return nil
}

// document builds st's head, and its parts when the body does not fit in the head, or says
// why it cannot be stored.
func (s *Store) document(st *responsestore.Stored) (*document, []*part, *firestore.DocumentRef, error) {
	if st.Expires.IsZero() {
		return nil, nil, nil, fmt.Errorf("firestorestore: put %s: no expiry", st.ID)
	}
	ref, ok := s.ref(st.ID, st.Owner)
	if !ok {
		return nil, nil, nil, fmt.Errorf("firestorestore: put %s: id and owner make a document id longer than the %d bytes the store takes", st.ID, maxIDBytes)
	}
	body, err := record.Pack(st.Input, st.Response)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("firestorestore: put %s: %w", st.ID, err)
	}
	d := &document{Owner: st.Owner, ID: st.ID, Model: st.Model, Created: st.Created, Expires: st.Expires, Body: body}
	if d.size(s.col.ID, ref.ID) <= MaxDocumentBytes && len(body) <= maxFieldBytes {
		return d, nil, ref, nil
	}
	d.Body, d.Gen = nil, record.Generation()
	chunks := record.Split(body, partBytes)
	d.Parts = len(chunks)
	if len(body) > s.maxBody || d.size(s.col.ID, ref.ID) > MaxDocumentBytes {
		return nil, nil, nil, fmt.Errorf("%w: %s is %d bytes compressed, over the %d the store keeps", responsestore.ErrTooLarge, st.ID, len(body), s.maxBody)
	}
	parts := make([]*part, len(chunks))
	for i, c := range chunks {
		parts[i] = &part{Body: c, Expires: st.Expires}
		if n := firestoredoc.Size(s.col.ID, s.partRef(ref, d.Gen, i).ID, map[string]int{"body": len(c), "expires": firestoredoc.TimestampBytes}); n > MaxDocumentBytes {
			return nil, nil, nil, fmt.Errorf("firestorestore: put %s: a part of %d bytes; the collection name is too long", st.ID, n)
		}
	}
	return d, parts, ref, nil
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
	body := d.Body
	if d.Parts > 0 {
		refs := make([]*firestore.DocumentRef, d.Parts)
		for i := range refs {
			refs[i] = s.partRef(ref, d.Gen, i)
		}
		snaps, err := s.c.GetAll(ctx, refs)
		if err != nil {
			return nil, s.failed("get", id, ctx, err)
		}
		for _, ps := range snaps {
			var p part
			if !ps.Exists() {
				return nil, responsestore.ErrNotFound // deleted since the head was read
			}
			if err := ps.DataTo(&p); err != nil {
				return nil, fmt.Errorf("firestorestore: %s: %w", ps.Ref.ID, err)
			}
			body = append(body, p.Body...)
		}
	}
	st := &responsestore.Stored{ID: d.ID, Owner: d.Owner, Model: d.Model, Created: d.Created, Expires: d.Expires}
	if st.Input, st.Response, err = record.Unpack(body); err != nil {
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
	if d.ID != id || d.Owner != owner || !s.now().Before(d.Expires) || d.Parts < 0 || d.Parts > MaxBodyBytes/partBytes+1 {
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
	// A transaction: of concurrent deletes one succeeds, an expired response still present
	// (TTL is late) is not there for the caller, and the parts go with the head.
	err := s.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(ref)
		if status.Code(err) == codes.NotFound {
			return responsestore.ErrNotFound
		}
		if err != nil {
			return err
		}
		d, err := s.live(snap, id, owner)
		if err != nil {
			return err
		}
		for i := range d.Parts {
			if err := tx.Delete(s.partRef(ref, d.Gen, i)); err != nil {
				return err
			}
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

// Open returns a store on the collection r names (config.DefaultResponsesCollection when
// empty) of r's project and database (the environment's project and the (default)
// database when empty), under r's timeout, and a func that closes its client. The client
// dials lazily: opening adds no latency to the first request.
func Open(ctx context.Context, r config.Responses) (*Store, func() error, error) {
	project := cmp.Or(r.Project, firestore.DetectProjectID)
	database := cmp.Or(r.Database, firestore.DefaultDatabaseID)
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return nil, nil, fmt.Errorf("responses: %w", err)
	}
	collection := cmp.Or(r.Collection, config.DefaultResponsesCollection)
	return New(client, collection, Options{Timeout: r.Timeout.D()}), client.Close, nil
}

// Where names the store's collection and database, for a start-up log line.
func (s *Store) Where() string { return firestoredoc.Where(s.col) }
