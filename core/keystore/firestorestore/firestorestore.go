// Package firestorestore keeps the stored keys and the admin audit log in Firestore, for the
// Cloud Functions (and a local server that names it).
//
// Collections, from the configured name C (config.DefaultKeysCollection, fngate_keys):
//
//	C          one document per key, id the key's id: doc (the key as keystore.EncodeKey
//	           writes it), ver, name, team, del, upd (Updated in Unix nanoseconds)
//	C_hashes   one document per live key's secret, id its SHA-256 in hex: id (the key's)
//	C_names    one document per live key's name, id the name's SHA-256 in hex (a name may
//	           hold what a document id may not): id
//	C_audit    one document per audit entry, id the entry's: doc (the entry as JSON),
//	           target, t (its time in Unix nanoseconds)
//
// Every change is one transaction: it reads the key and the claims it would take, and
// writes the key, the claims it takes and frees and the audit entry, or nothing. Firestore
// runs a transaction again when another changed what it read, and the second run finds the
// other's result: of two admins racing on one key or one name, one wins and the other gets
// ErrConflict or ErrNameTaken. Times are Unix nanoseconds, not timestamps, which Firestore
// keeps to the microsecond, so Changed compares what the gateway compares.
//
// Indexes: the automatic single-field ones serve Get, ByHash, Changed (upd) and List
// (equality filters merged, ordered by id); Audit of one target needs the composite index
// C_audit (target ASC, t DESC, __name__ DESC). No TTL. IAM: the gateway reads
// (roles/datastore.viewer), the control plane writes (roles/datastore.user).
package firestorestore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/internal/firestoredoc"
	"github.com/fngate/fngate/core/keystore"
)

// Collection suffixes beside the keys' collection.
const (
	HashesSuffix = "_hashes"
	NamesSuffix  = "_names"
	AuditSuffix  = "_audit"
)

// Store is a keystore.Store in Firestore.
type Store struct {
	c                          *firestore.Client
	keys, hashes, names, audit *firestore.CollectionRef
	timeout                    time.Duration
}

// Options tune a store.
type Options struct {
	// Timeout bounds each call (config.DefaultStoreTimeout when 0).
	Timeout time.Duration
}

// New returns a store in the collection (and those it names with the suffixes).
func New(c *firestore.Client, collection string, o Options) *Store {
	if o.Timeout <= 0 {
		o.Timeout = config.DefaultStoreTimeout
	}
	return &Store{c: c, keys: c.Collection(collection), hashes: c.Collection(collection + HashesSuffix),
		names: c.Collection(collection + NamesSuffix), audit: c.Collection(collection + AuditSuffix), timeout: o.Timeout}
}

// Open returns a store in the project, database and collection ks names (else the detected
// project, the (default) database and config.DefaultKeysCollection), and a func closing its
// client. The client connects at its first call.
func Open(ctx context.Context, ks config.KeyStore) (*Store, func() error, error) {
	project := cmp.Or(ks.Project, firestore.DetectProjectID)
	database := cmp.Or(ks.Database, firestore.DefaultDatabaseID)
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return nil, nil, fmt.Errorf("key_store: %w", err)
	}
	return New(client, cmp.Or(ks.Collection, config.DefaultKeysCollection), Options{Timeout: ks.Timeout.D()}), client.Close, nil
}

// Where names the store's collection and database, for a start-up log line.
func (s *Store) Where() string { return firestoredoc.Where(s.keys) }

type keyDoc struct {
	Doc     string `firestore:"doc"`
	Version int64  `firestore:"ver"`
	Name    string `firestore:"name"`
	Team    string `firestore:"team"`
	Deleted bool   `firestore:"del"`
	Updated int64  `firestore:"upd"`
}

type claimDoc struct {
	ID string `firestore:"id"`
}

type entryDoc struct {
	Doc    string `firestore:"doc"`
	Target string `firestore:"target"`
	Time   int64  `firestore:"t"`
}

// nanos is t in Unix nanoseconds, clamped where UnixNano is undefined.
func nanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

func docOf(k *keystore.Key) (*keyDoc, error) {
	b, err := keystore.EncodeKey(k)
	if err != nil {
		return nil, err
	}
	return &keyDoc{Doc: string(b), Version: k.Version, Name: k.Name, Team: k.Team, Deleted: k.Deleted, Updated: nanos(k.Updated)}, nil
}

func keyFrom(snap *firestore.DocumentSnapshot) (*keystore.Key, error) {
	var d keyDoc
	if err := snap.DataTo(&d); err != nil {
		return nil, fmt.Errorf("keystore: firestore: %w", err)
	}
	return keystore.DecodeKey([]byte(d.Doc))
}

func (s *Store) hashRef(h [32]byte) *firestore.DocumentRef {
	return s.hashes.Doc(hex.EncodeToString(h[:]))
}

func (s *Store) nameRef(name string) *firestore.DocumentRef {
	h := sha256.Sum256([]byte(name))
	return s.names.Doc(hex.EncodeToString(h[:]))
}

// validID reports whether id can name a document (a key's ids are base62 after key_).
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, "/") && id != "." && id != ".." && len(id) <= 256
}

func (s *Store) entryWrite(tx *firestore.Transaction, e *keystore.Entry) error {
	if e == nil {
		return nil
	}
	if !validID(e.ID) {
		return fmt.Errorf("keystore: the audit entry id %q cannot name a document", e.ID)
	}
	b, err := keystore.EncodeEntry(e)
	if err != nil {
		return err
	}
	return tx.Create(s.audit.Doc(e.ID), &entryDoc{Doc: string(b), Target: e.Target, Time: nanos(e.Time)})
}

// run runs f as one transaction under the store's timeout; f's keystore errors come back as
// they are.
func (s *Store) run(ctx context.Context, f func(context.Context, *firestore.Transaction) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := s.c.RunTransaction(ctx, f)
	for _, known := range []error{keystore.ErrNotFound, keystore.ErrNameTaken, keystore.ErrExists, keystore.ErrConflict} {
		if errors.Is(err, known) {
			return known
		}
	}
	if err != nil {
		return fmt.Errorf("keystore: firestore: %w", err)
	}
	return nil
}

func (s *Store) Create(ctx context.Context, k *keystore.Key, e *keystore.Entry) error {
	if !validID(k.ID) {
		return fmt.Errorf("keystore: the key id %q cannot name a document", k.ID)
	}
	c := k.Clone()
	c.Version = 1
	d, err := docOf(c)
	if err != nil {
		return err
	}
	keyRef, hashRef, nameRef := s.keys.Doc(c.ID), s.hashRef(c.Hash), s.nameRef(c.Name)
	return s.run(ctx, func(_ context.Context, tx *firestore.Transaction) error {
		snaps, err := tx.GetAll([]*firestore.DocumentRef{keyRef, hashRef, nameRef})
		if err != nil {
			return err
		}
		switch {
		case snaps[0].Exists(), snaps[1].Exists():
			return keystore.ErrExists
		case snaps[2].Exists():
			return keystore.ErrNameTaken
		}
		for _, w := range []struct {
			ref  *firestore.DocumentRef
			data any
		}{{keyRef, d}, {hashRef, &claimDoc{c.ID}}, {nameRef, &claimDoc{c.ID}}} {
			if err := tx.Create(w.ref, w.data); err != nil {
				return err
			}
		}
		return s.entryWrite(tx, e)
	})
}

func (s *Store) Update(ctx context.Context, k *keystore.Key, e *keystore.Entry) error {
	if !validID(k.ID) {
		return keystore.ErrNotFound
	}
	c := k.Clone()
	d, err := docOf(c)
	if err != nil {
		return err
	}
	keyRef := s.keys.Doc(c.ID)
	return s.run(ctx, func(_ context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(keyRef)
		if isNotFound(err) {
			return keystore.ErrNotFound
		}
		if err != nil {
			return err
		}
		old, err := keyFrom(snap)
		if err != nil {
			return err
		}
		if old.Deleted || old.Version != c.Version-1 {
			return keystore.ErrConflict
		}
		newHash := !c.Deleted && c.Hash != old.Hash
		newName := !c.Deleted && c.Name != old.Name
		// Every read comes before the first write.
		var claims []*firestore.DocumentRef
		if newHash {
			claims = append(claims, s.hashRef(c.Hash))
		}
		if newName {
			claims = append(claims, s.nameRef(c.Name))
		}
		snaps, err := tx.GetAll(claims)
		if err != nil {
			return err
		}
		for i, snap := range snaps {
			if snap.Exists() {
				if newHash && i == 0 {
					return keystore.ErrExists
				}
				return keystore.ErrNameTaken
			}
		}
		if err := tx.Set(keyRef, d); err != nil {
			return err
		}
		if c.Deleted || newHash {
			if err := tx.Delete(s.hashRef(old.Hash)); err != nil {
				return err
			}
		}
		if c.Deleted || newName {
			if err := tx.Delete(s.nameRef(old.Name)); err != nil {
				return err
			}
		}
		for _, ref := range claims {
			if err := tx.Create(ref, &claimDoc{c.ID}); err != nil {
				return err
			}
		}
		return s.entryWrite(tx, e)
	})
}

func isNotFound(err error) bool { return status.Code(err) == codes.NotFound }

func (s *Store) Get(ctx context.Context, id string) (*keystore.Key, error) {
	if !validID(id) {
		return nil, keystore.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := s.keys.Doc(id).Get(ctx)
	if isNotFound(err) {
		return nil, keystore.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: firestore: %w", err)
	}
	return keyFrom(snap)
}

func (s *Store) ByHash(ctx context.Context, hash [32]byte) (*keystore.Key, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := s.hashRef(hash).Get(ctx)
	if isNotFound(err) {
		return nil, keystore.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: firestore: %w", err)
	}
	var c claimDoc
	if err := snap.DataTo(&c); err != nil {
		return nil, fmt.Errorf("keystore: firestore: %w", err)
	}
	k, err := s.Get(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	// Between the two reads the key may have been rotated or deleted.
	if k.Deleted || k.Hash != hash {
		return nil, keystore.ErrNotFound
	}
	return k, nil
}

// all reads q's documents through f.
func (s *Store) all(ctx context.Context, q firestore.Query, f func(*firestore.DocumentSnapshot) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	it := q.Documents(ctx)
	defer it.Stop()
	for {
		snap, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("keystore: firestore: %w", err)
		}
		if err := f(snap); err != nil {
			return err
		}
	}
}

func (s *Store) List(ctx context.Context, q keystore.Query) (*keystore.KeyPage, error) {
	limit := keystore.PageLimit(q.Limit)
	fq := s.keys.Query
	if q.Team != "" {
		fq = fq.Where("team", "==", q.Team)
	}
	if q.Name != "" {
		fq = fq.Where("name", "==", q.Name)
	}
	if !q.Deleted {
		fq = fq.Where("del", "==", false)
	}
	fq = fq.OrderBy(firestore.DocumentID, firestore.Asc)
	if q.After != "" {
		if !validID(q.After) {
			return &keystore.KeyPage{}, nil
		}
		fq = fq.StartAfter(q.After)
	}
	page := &keystore.KeyPage{}
	n := 0
	err := s.all(ctx, fq.Limit(limit+1), func(snap *firestore.DocumentSnapshot) error {
		if n++; n > limit {
			page.Next = page.Keys[limit-1].ID
			return nil
		}
		k, err := keyFrom(snap)
		page.Keys = append(page.Keys, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

func (s *Store) Changed(ctx context.Context, since time.Time) ([]*keystore.Key, bool, error) {
	q := s.keys.Where("upd", ">=", nanos(since)).OrderBy("upd", firestore.Asc).OrderBy(firestore.DocumentID, firestore.Asc).Limit(keystore.MaxChanges + 1)
	var out []*keystore.Key
	err := s.all(ctx, q, func(snap *firestore.DocumentSnapshot) error {
		k, err := keyFrom(snap)
		out = append(out, k)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if len(out) > keystore.MaxChanges {
		return out[:keystore.MaxChanges], true, nil
	}
	return out, false, nil
}

// The audit's cursor is the last entry's time and id: "<unix ns>.<id>".
func cursorOf(t int64, id string) string { return strconv.FormatInt(t, 10) + "." + id }

func parseCursor(c string) (int64, string, bool) {
	ts, id, ok := strings.Cut(c, ".")
	t, err := strconv.ParseInt(ts, 10, 64)
	return t, id, ok && err == nil && validID(id)
}

func (s *Store) Audit(ctx context.Context, q keystore.AuditQuery) (*keystore.AuditPage, error) {
	limit := keystore.PageLimit(q.Limit)
	fq := s.audit.Query
	if q.Target != "" {
		fq = fq.Where("target", "==", q.Target)
	}
	if !q.Since.IsZero() {
		fq = fq.Where("t", ">=", nanos(q.Since))
	}
	if !q.Until.IsZero() {
		fq = fq.Where("t", "<", nanos(q.Until))
	}
	fq = fq.OrderBy("t", firestore.Desc).OrderBy(firestore.DocumentID, firestore.Desc)
	page := &keystore.AuditPage{}
	if q.After != "" {
		t, id, ok := parseCursor(q.After)
		if !ok {
			return page, nil
		}
		fq = fq.StartAfter(t, id)
	}
	var last []string
	err := s.all(ctx, fq.Limit(limit+1), func(snap *firestore.DocumentSnapshot) error {
		var d entryDoc
		if err := snap.DataTo(&d); err != nil {
			return fmt.Errorf("keystore: firestore: %w", err)
		}
		if len(page.Entries) == limit {
			page.Next = last[limit-1]
			return nil
		}
		e, err := keystore.DecodeEntry([]byte(d.Doc))
		page.Entries, last = append(page.Entries, e), append(last, cursorOf(d.Time, snap.Ref.ID))
		return err
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

var _ keystore.Store = (*Store)(nil)
