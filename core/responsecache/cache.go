// Package responsecache keeps answers the gateway may serve again to an identical request
// (the response cache: `cache: {ttl: 1h}` on a model, a key or key_defaults, and the store
// in response_cache). An entry is stored under a key that names everything that determines
// the answer (key.go) and holds the answer as recorded (recording.go), in the gateway's own
// wire-neutral form, so any door can replay it in its shape, stream or not.
//
//	cache.go            Entry, the Store interface, the errors, and the memory store (make run)
//	key.go              Identity: the partition and the request digest an entry is found by
//	recording.go        Recording: a whole answer, or a stream's deltas, as stored
//	file.go             one file per entry under a directory (make run across restarts)
//	dynamostore/        a DynamoDB table (the Lambda function)
//	firestorestore/     a Firestore collection (Cloud Functions)
//	internal/pack       how the cloud stores fit a body in one item: as it is, or compressed
//	internal/storetest  the conformance suite every store passes
//
// Expiry is checked on every read against the store's clock: the cloud stores' TTL deletes
// an entry up to days late, and their emulators never do. An entry is one item (DynamoDB
// 400 KB, Firestore 1 MiB, the memory and file stores MaxEntryBytes): a cloud store
// compresses a body that does not fit as it is, and a body that does not fit compressed
// either is refused with ErrTooLarge, which the gateway takes as "not cached". Every store
// refuses a key that is not valid in all of them (ValidKey). A cache is an optimisation, so
// a store that fails says so with an error and the gateway serves the request as a miss.
package responsecache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors a Store returns; any other error means the store could not answer.
var (
	// ErrNotFound is an entry that is not stored or has expired.
	ErrNotFound = errors.New("responsecache: no such entry")
	// ErrTooLarge is an entry the store cannot hold in one item, even compressed. Nothing
	// is written.
	ErrTooLarge = errors.New("responsecache: entry too large to cache")
)

// MaxEntryBytes bounds the body of an entry in the memory and file stores, as Firestore's
// document limit bounds it there, so an answer cached on one store is cached on the others.
const MaxEntryBytes = 1 << 20

// Entry is one cached answer.
type Entry struct {
	// Key is Identity.Key(): the partition and the request digest. At most MaxKeyBytes.
	Key string
	// Model is the gateway model, for an operator reading the store.
	Model string
	// Created and Expires bound its life; a store forgets it once its clock reaches Expires.
	Created time.Time
	Expires time.Time
	// Body is the recorded answer (Recording.Encode), opaque to the stores.
	Body []byte
}

// Store keeps cached answers. Implementations are safe for concurrent use and bound their
// own calls' time.
type Store interface {
	// Get returns the entry stored under key, or ErrNotFound.
	Get(ctx context.Context, key string) (*Entry, error)
	// Put stores e, replacing an entry under the same key, or refuses it with ErrTooLarge.
	Put(ctx context.Context, e *Entry) error
}

// maxMemoryEntries bounds the memory store: past it, a Put drops one entry first, after
// the expired ones when it last swept more than a minute ago.
const maxMemoryEntries = 4096

// Memory is a Store in the process's memory, for make run and tests. Now is its clock. Its
// calls take no time of their own, but honour a cancelled context as the other stores do.
type Memory struct {
	Now func() time.Time

	mu        sync.Mutex
	m         map[string]*Entry
	lastSweep time.Time
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory { return &Memory{Now: time.Now, m: map[string]*Entry{}} }

func (s *Memory) Get(ctx context.Context, key string) (*Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("responsecache: get: %w", err)
	}
	if !ValidKey(key) {
		return nil, ErrNotFound // Put refuses such keys: none is stored
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok || !s.Now().Before(e.Expires) {
		return nil, ErrNotFound
	}
	c := *e
	c.Body = append([]byte(nil), e.Body...)
	return &c, nil
}

func (s *Memory) Put(ctx context.Context, e *Entry) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("responsecache: put: %w", err)
	}
	if !ValidKey(e.Key) {
		return fmt.Errorf("responsecache: put: %.40q is not an entry key", e.Key)
	}
	if len(e.Body) > MaxEntryBytes {
		return fmt.Errorf("%w: a body of %d bytes, over the %d the store keeps", ErrTooLarge, len(e.Body), MaxEntryBytes)
	}
	c := *e
	c.Body = append([]byte(nil), e.Body...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, replacing := s.m[e.Key]; !replacing && len(s.m) >= maxMemoryEntries {
		s.evict()
	}
	s.m[e.Key] = &c
	return nil
}

// evict makes room for one entry: the expired ones go, at most once a minute, and if none
// had expired, an arbitrary one (Go's map order), so that a Put never scans the store twice.
func (s *Memory) evict() {
	now := s.Now()
	if now.Sub(s.lastSweep) > time.Minute {
		s.lastSweep = now
		for k, e := range s.m {
			if !now.Before(e.Expires) {
				delete(s.m, k)
			}
		}
	}
	for k := range s.m {
		if len(s.m) < maxMemoryEntries {
			return
		}
		delete(s.m, k)
	}
}

var _ Store = (*Memory)(nil)
