// Package firestorestore keeps the response cache in a Firestore collection (native mode),
// for the Cloud Functions gateway (and a local server that names it).
//
// An entry is one document of the collection (config.DefaultCacheCollection unless named),
// its id the entry's key (responsecache.Identity.Key, a valid document id), with the fields
//
//	model     the gateway model, for an operator reading the collection
//	created   timestamps (Firestore keeps microseconds)
//	expires   the field the collection's TTL policy deletes on; TTL deletes up to a day or
//	          more late, and the emulator never, so a read compares it with the store's clock
//	body      the recorded answer: as it is when the document fits in MaxDocumentBytes
//	gz        (counted as Firestore counts it: the document's name, each field's name and
//	          value, 32 bytes more), else gzip-compressed, and gz says which
//
// A body that does not fit compressed either is refused with ErrTooLarge before any call:
// the gateway then serves the answer uncached. Put replaces the whole document, so nothing
// of an entry's earlier body stays with the next. Each Get and Put runs under the store's
// timeout (config.DefaultCacheTimeout unless told): the lookup sits before every miss's
// upstream call.
package firestorestore

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/firestoredoc"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/internal/pack"
)

// MaxDocumentBytes is Firestore's limit on a document's size.
const MaxDocumentBytes = firestoredoc.MaxBytes

// TTLField is the field the collection's TTL policy names; the IaC declares the same.
const TTLField = "expires"

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means config.DefaultCacheTimeout, the
	// response_cache.timeout a config leaves unset.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is a responsecache.Store on one Firestore collection.
type Store struct {
	col     *firestore.CollectionRef
	timeout time.Duration
	now     func() time.Time
}

// New returns a store on the named collection of the client's database.
func New(c *firestore.Client, collection string, opt Options) *Store {
	s := &Store{col: c.Collection(collection), timeout: opt.Timeout, now: opt.Now}
	if s.timeout <= 0 {
		s.timeout = config.DefaultCacheTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// document is a stored entry.
type document struct {
	Model   string    `firestore:"model,omitempty"`
	Created time.Time `firestore:"created"`
	Expires time.Time `firestore:"expires"`
	Body    []byte    `firestore:"body"`
	GZ      bool      `firestore:"gz"`
}

func (d *document) size(collection, id string) int {
	f := map[string]int{"created": firestoredoc.TimestampBytes, "expires": firestoredoc.TimestampBytes,
		"body": len(d.Body), "gz": firestoredoc.BoolBytes}
	if d.Model != "" {
		f["model"] = firestoredoc.StringBytes(d.Model)
	}
	return firestoredoc.Size(collection, id, f)
}

func (s *Store) Put(ctx context.Context, e *responsecache.Entry) error {
	d, err := s.document(e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.col.Doc(e.Key).Set(ctx, d); err != nil {
		return s.failed("put", e.Key, ctx, err)
	}
	return nil
}

// document builds e's document, or says why it cannot be stored.
func (s *Store) document(e *responsecache.Entry) (*document, error) {
	if !responsecache.ValidKey(e.Key) {
		return nil, fmt.Errorf("firestorestore: put: %.40q is not an entry key", e.Key)
	}
	d := &document{Model: e.Model, Created: e.Created, Expires: e.Expires}
	var err error
	d.Body, d.GZ, err = pack.Fit(e.Body, func(body []byte, gz bool) bool {
		// The document's limit binds before the field's (firestoredoc.MaxFieldBytes): the
		// name and the other fields of any document take more than the 89 bytes between them.
		d.Body, d.GZ = body, gz
		return d.size(s.col.ID, e.Key) <= MaxDocumentBytes
	})
	if err != nil {
		return nil, fmt.Errorf("firestorestore: put %s: %w", e.Key, err)
	}
	return d, nil
}

func (s *Store) Get(ctx context.Context, key string) (*responsecache.Entry, error) {
	if !responsecache.ValidKey(key) {
		return nil, responsecache.ErrNotFound // Put refuses such keys: none is stored
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := s.col.Doc(key).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil, responsecache.ErrNotFound
	}
	if err != nil {
		return nil, s.failed("get", key, ctx, err)
	}
	var d document
	if err := snap.DataTo(&d); err != nil {
		return nil, fmt.Errorf("firestorestore: get %s: %w", key, err)
	}
	if !s.now().Before(d.Expires) {
		return nil, responsecache.ErrNotFound
	}
	e := &responsecache.Entry{Key: key, Model: d.Model, Created: d.Created, Expires: d.Expires}
	if e.Body, err = pack.Read(d.Body, d.GZ); err != nil {
		return nil, fmt.Errorf("firestorestore: get %s: %w", key, err)
	}
	return e, nil
}

// failed says which call failed, and that it timed out when it did.
func (s *Store) failed(op, key string, ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("firestorestore: %s %s: collection %s did not answer within %v: %w", op, key, s.col.ID, s.timeout, err)
	}
	return fmt.Errorf("firestorestore: %s %s in collection %s: %w", op, key, s.col.ID, err)
}

var _ responsecache.Store = (*Store)(nil)

// Open returns a store on the collection c names (config.DefaultCacheCollection when empty)
// of c's project and database (the environment's project and the (default) database when
// empty), under c's timeout, and a func that closes its client. The client dials lazily:
// opening adds no latency to the first request.
func Open(ctx context.Context, c config.ResponseCache) (*Store, func() error, error) {
	project := cmp.Or(c.Project, firestore.DetectProjectID)
	database := cmp.Or(c.Database, firestore.DefaultDatabaseID)
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return nil, nil, fmt.Errorf("response_cache: %w", err)
	}
	collection := cmp.Or(c.Collection, config.DefaultCacheCollection)
	return New(client, collection, Options{Timeout: c.Timeout.D()}), client.Close, nil
}

// Where names the store's collection and database, for a start-up log line.
func (s *Store) Where() string { return firestoredoc.Where(s.col) }
