// Package firestorestore keeps MCP sessions in a Firestore collection (native mode), for the
// Cloud Functions gateway (and a local server that names it): any instance continues a
// session another one opened.
//
// A session is one document of the collection (config.DefaultMCPSessionsCollection unless
// named), whose id is the session id (query-escaped, see docID: session ids are random hex
// or base64url, which passes unchanged), with the fields
//
//	owner       the caller that opened it
//	state       the gateway's record of the session (bytes)
//	expires_at  when it expires (a timestamp; Firestore keeps microseconds): the field the
//	            collection's TTL policy deletes on (TTLField; the IaC declares it). TTL
//	            deletes up to a day or more late, so reads compare it with the store's clock
//
// Each Put, Get and Delete runs under the store's timeout. IAM: roles/datastore.user on the
// database (documents get, create, update, delete).
package firestorestore

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/firestoredoc"
	"github.com/fngate/fngate/core/mcpsessions"
)

// TTLField is the field the collection's TTL policy names; the IaC declares the same.
const TTLField = "expires_at"

// maxIDBytes is Firestore's limit on a document id.
const maxIDBytes = 1500

// Options tune a store.
type Options struct {
	// Timeout bounds each call; 0 means config.DefaultStoreTimeout.
	Timeout time.Duration
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is a mcpsessions.Store on one Firestore collection.
type Store struct {
	col     *firestore.CollectionRef
	timeout time.Duration
	now     func() time.Time
}

// New returns a store on the named collection of the client's database.
func New(c *firestore.Client, collection string, opt Options) *Store {
	s := &Store{col: c.Collection(collection), timeout: opt.Timeout, now: opt.Now}
	if s.timeout <= 0 {
		s.timeout = config.DefaultStoreTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// document is a stored session.
type document struct {
	Owner   string    `firestore:"owner"`
	State   []byte    `firestore:"state"`
	Expires time.Time `firestore:"expires_at"`
}

// docID is the document id of session id: the id query-escaped (so no '/' splits the path),
// a leading '_' written %5F (so it is never __.*__) and "." and ".." written %2E. Query
// escaping never writes %5F or %2E itself, so no two ids share a document.
func docID(id string) string {
	k := url.QueryEscape(id)
	switch {
	case k == "." || k == "..":
		k = strings.ReplaceAll(k, ".", "%2E")
	case strings.HasPrefix(k, "_"):
		k = "%5F" + k[1:]
	}
	return k
}

// ref is session id's document; false when Firestore would take no such id (Put refuses
// it, so none is stored).
func (s *Store) ref(id string) (*firestore.DocumentRef, bool) {
	k := docID(id)
	if k == "" || len(k) > maxIDBytes {
		return nil, false
	}
	return s.col.Doc(k), true
}

func (s *Store) Put(ctx context.Context, sess mcpsessions.Session) error {
	ref, ok := s.ref(sess.ID)
	if !ok {
		return fmt.Errorf("firestorestore: put: a session id of %d bytes escaped; the store takes 1 to %d", len(docID(sess.ID)), maxIDBytes)
	}
	if sess.Expires.IsZero() {
		return fmt.Errorf("firestorestore: put %s: no expiry", sess.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := ref.Set(ctx, &document{Owner: sess.Owner, State: sess.State, Expires: sess.Expires}); err != nil {
		return s.failed("put", sess.ID, ctx, err)
	}
	return nil
}

func (s *Store) Get(ctx context.Context, id string) (mcpsessions.Session, error) {
	ref, ok := s.ref(id)
	if !ok {
		return mcpsessions.Session{}, mcpsessions.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := ref.Get(ctx)
	if status.Code(err) == codes.NotFound {
		return mcpsessions.Session{}, mcpsessions.ErrNotFound
	}
	if err != nil {
		return mcpsessions.Session{}, s.failed("get", id, ctx, err)
	}
	var d document
	if err := snap.DataTo(&d); err != nil {
		return mcpsessions.Session{}, fmt.Errorf("firestorestore: get %s: %w", id, err)
	}
	if !s.now().Before(d.Expires) {
		return mcpsessions.Session{}, mcpsessions.ErrNotFound
	}
	return mcpsessions.Session{ID: id, Owner: d.Owner, State: d.State, Expires: d.Expires}, nil
}

func (s *Store) Delete(ctx context.Context, id string) error {
	ref, ok := s.ref(id)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// Without a precondition, deleting a document that is not there succeeds.
	if _, err := ref.Delete(ctx); err != nil {
		return s.failed("delete", id, ctx, err)
	}
	return nil
}

// failed says which call failed, and that it timed out when it did.
func (s *Store) failed(op, id string, ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("firestorestore: %s %s: collection %s did not answer within %v: %w", op, id, s.col.ID, s.timeout, err)
	}
	return fmt.Errorf("firestorestore: %s %s in collection %s: %w", op, id, s.col.ID, err)
}

var _ mcpsessions.Store = (*Store)(nil)

// Open returns a store on the collection c names (config.DefaultMCPSessionsCollection when
// empty) of c's project and database (the environment's project and the (default) database
// when empty), under c's timeout, and a func that closes its client. The client dials
// lazily: opening adds no latency to the first request.
func Open(ctx context.Context, c config.MCPSessions) (*Store, func() error, error) {
	project := cmp.Or(c.Project, firestore.DetectProjectID)
	database := cmp.Or(c.Database, firestore.DefaultDatabaseID)
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return nil, nil, fmt.Errorf("mcp_sessions: %w", err)
	}
	collection := cmp.Or(c.Collection, config.DefaultMCPSessionsCollection)
	return New(client, collection, Options{Timeout: c.Timeout.D()}), client.Close, nil
}

// Where names the store's collection and database, for a start-up log line.
func (s *Store) Where() string { return firestoredoc.Where(s.col) }
