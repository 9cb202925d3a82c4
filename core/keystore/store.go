package keystore

import (
	"context"
	"errors"
	"time"
)

// Errors a Store returns; any other error means the store could not answer (unreachable,
// timed out, refused), which is no evidence either way.
var (
	// ErrNotFound is no key with that id, or no live key with that hash.
	ErrNotFound = errors.New("keystore: no such key")
	// ErrNameTaken is a name another live stored key has.
	ErrNameTaken = errors.New("keystore: a key of that name exists")
	// ErrExists is an id or a secret hash already in the store.
	ErrExists = errors.New("keystore: a key with that id or secret exists")
	// ErrConflict is an update of a version that is no longer the key's: another change came
	// first. Nothing was written.
	ErrConflict = errors.New("keystore: the key changed since it was read")
)

// Page bounds.
const (
	DefaultPage = 50
	MaxPage     = 200
	// MaxChanges bounds one Changed answer: a cache that falls further behind reloads.
	MaxChanges = 1000
)

// Query pages the stored keys, ordered by id.
type Query struct {
	// Team, when set, keeps the keys of one team.
	Team string
	// Name, when set, keeps the key of that name (and its tombstones, with Deleted).
	Name string
	// Deleted includes tombstones.
	Deleted bool
	// After is the id the previous page ended at; "" starts at the first.
	After string
	// Limit is the page's size, at most MaxPage (0: DefaultPage).
	Limit int
}

// KeyPage is one page of keys.
type KeyPage struct {
	Keys []*Key
	// Next is the cursor of the next page, "" when this is the last.
	Next string
}

// Store keeps stored keys and the audit log. Implementations are safe for concurrent use,
// bound their own calls' time, and write a change and its audit entry together or not at all.
type Store interface {
	// Create stores the new key k (Version 1) with its audit entry. ErrNameTaken when a
	// live stored key has k's name; ErrExists when its id or hash is in the store.
	Create(ctx context.Context, k *Key, e *Entry) error
	// Update writes k (its Version one more than the version read) with its audit entry,
	// if the stored key's version is still k.Version-1, else ErrConflict. A changed Hash
	// (a rotation) frees the old one and claims the new (ErrExists when taken); a changed
	// Name claims it (ErrNameTaken); Deleted frees the name and the hash for good.
	Update(ctx context.Context, k *Key, e *Entry) error
	// Get returns the key id (tombstones included), or ErrNotFound.
	Get(ctx context.Context, id string) (*Key, error)
	// ByHash returns the live (not deleted) key whose secret has that hash, or ErrNotFound.
	// It says nothing of disabled or expired: the caller asks Usable.
	ByHash(ctx context.Context, hash [32]byte) (*Key, error)
	// List returns one page of keys.
	List(ctx context.Context, q Query) (*KeyPage, error)
	// Changed returns the keys updated at or after since (tombstones included), oldest
	// change first, at most MaxChanges; more reports that there were more.
	Changed(ctx context.Context, since time.Time) (keys []*Key, more bool, err error)
	// Audit returns one page of the audit log, newest first.
	Audit(ctx context.Context, q AuditQuery) (*AuditPage, error)
	// Record appends an audit entry about a change made elsewhere (a route cooled or
	// restored by hand in the route-state store), so the one audit log has every admin
	// change. Entries about keys are written by Create and Update, never by Record.
	Record(ctx context.Context, e *Entry) error
}

func pageLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultPage
	case n > MaxPage:
		return MaxPage
	}
	return n
}

// PageLimit is the page size a store answers for a requested limit.
func PageLimit(n int) int { return pageLimit(n) }
